// A listener returns `()` or `Result<(), E: Display>`; one that returns a
// number says so.
use gantry_host::{Hub, Source};

fn main() {
    let hub = Hub::new();
    let _listening = hub.listen("Player.Hurt", Source::Global, |dmg: f64| dmg * 2.0);
}
