// A listener's parameter must be a type a value converts to.
use gantry_host::{Hub, Source};

struct Sword;

fn main() {
    let hub = Hub::new();
    let _listening = hub.listen("Player.Hurt", Source::Global, |_by: Sword| ());
}
