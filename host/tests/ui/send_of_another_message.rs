// A typed key's send takes its own message struct, not another one.
use gantry_host::{Hub, Source};

#[derive(gantry_host::Message)]
#[message(key = "Player.Hurt")]
struct Hurt {
    dmg: f64,
}

#[derive(gantry_host::Message)]
#[message(key = "Player.Healed")]
struct Healed {
    amount: f64,
}

fn main() {
    let hub = Hub::new();
    let hurt = hub.declare_message::<Hurt>().unwrap();
    hurt.send(&hub, Source::Global, Healed { amount: 1.0 })
        .unwrap();
}
