//! A Rust host on the hub: one world, two objects, listeners on the three
//! tiers with `order` and `times`, a stored message replayed to a late
//! listener, a request and a hook. Run with `cargo run --example tiers`.

use gantry_host::{
    HookOptions, Hub, KeyDecl, ListenOptions, Reply, Source, StructValue, Type, Value,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let hub = Hub::new();
    hub.declare(
        "Player.Hurt",
        KeyDecl::event()
            .param("dmg", Type::Float)
            .param("hp_left", Type::Int)
            .doc("A player took damage"),
    )?;
    let world = hub.create_world();
    let hero = hub.spawn(world)?;
    let goblin = hub.spawn(world)?;

    let _global = hub.listen("Player.Hurt", Source::Global, |dmg: f64| {
        println!("  [global] someone took {dmg} damage")
    })?;
    let _world = hub.listen_with(
        "Player.Hurt",
        world,
        ListenOptions::new().order(-10),
        |dmg: f64, hp: i64| println!("  [world, order -10] {dmg} damage, {hp} hp left"),
    )?;
    let _hero = hub.listen_with(
        "Player.Hurt",
        hero,
        ListenOptions::new().times(2),
        |_: f64, hp: i64| println!("  [hero only, times 2] hero has {hp} hp"),
    )?;

    let hurt = hub.key("Player.Hurt")?;
    for (round, hp) in [(1, 90i64), (2, 75), (3, 60)] {
        println!("round {round}: the hero is hit (object send reaches object, world, global)");
        hub.send(hurt, hero, (10.0f64, hp))?;
    }
    println!("the goblin is hit (the hero's listener does not hear it)");
    hub.send(hurt, goblin, (4i64, 20i64))?; // an int is accepted for a float
    println!("a world-wide send reaches world and global listeners only");
    hub.send(hurt, world, (1.0f64, 0i64))?;

    println!("a stored message reaches a listener that arrives late");
    let ready = hub.key("Game.Ready")?;
    hub.store(ready, world, ("arena",))?;
    let _late = hub.listen("Game.Ready", world, |map: String| {
        println!("  [late listener] game ready on {map}")
    })?;

    println!("a request is answered by whoever listens with a responder");
    let _shop = hub.listen_message("Shop.Price", Source::Global, ListenOptions::new(), |m| {
        let item = m.args[0].as_str().unwrap_or("?").len() as i64;
        if let Some(responder) = m.responder {
            responder.respond((item * 10,));
        }
    })?;
    hub.request(
        hub.key("Shop.Price")?,
        Source::Global,
        ("potion",),
        |reply| match reply {
            Reply::Answer(values) => println!("  [requester] price: {}", values[0]),
            Reply::Unanswered => println!("  [requester] nobody answered"),
        },
    )?;

    println!("a hook lets an armour listener halve the damage before it lands");
    let _armour = hub.listen_hook("Combat.Damage", HookOptions::new().priority(10), |call| {
        if let Value::Struct(s) = call.payload {
            let mut s = (**s).clone();
            let amount = s.get("amount").and_then(Value::as_int).unwrap_or(0);
            s.set("amount", Value::Int(amount / 2));
            *call.payload = Value::structure(s);
            call.handled();
        }
    })?;
    let mut payload = Value::structure(StructValue::new("Damage").with("amount", 30i64));
    let result = hub.run_hook("Combat.Damage", &mut payload)?;
    println!(
        "  [caller] {} listener(s) ran, handled: {}, damage now {payload}",
        result.ran, result.handled
    );

    println!("signature table:");
    print!("{}", hub.table().to_json());
    Ok(())
}
