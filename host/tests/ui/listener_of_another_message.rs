// A typed key's listener gets the key's message struct: a closure that
// takes another type does not fit.
use gantry_host::{Hub, Source};

#[derive(gantry_host::Message)]
#[message(key = "Player.Hurt")]
struct Hurt {
    dmg: f64,
}

fn main() {
    let hub = Hub::new();
    let hurt = hub.declare_message::<Hurt>().unwrap();
    let _listening = hurt.listen(&hub, Source::Global, |dmg: f64| println!("{dmg}"));
}
