//! A small arena game embedding the hub, written as a game programmer
//! would: every key declared once by its Rust struct, two Lua mods and a
//! Rhai mod (`mods/`), a Rust listener, a typed hook the Rhai mod
//! cancels, a collection a Lua mod follows row by row, a deliberate
//! mistake reported through the one report stream, a mod on the player
//! unloaded and reloaded while what it stored on the player survives, and
//! the signature table saved and loaded again.
//!
//! Run with `cargo run --example arena_game [TABLE.json]`; its README
//! counts which of these lines are plumbing.

use std::cell::RefCell;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use gantry_host::face::ScriptRuntime;
use gantry_host::reports::ReportStream;
use gantry_host::{Hub, ObjectId, TableFile};
use gantry_lua::runtime::{LuaOptions, LuaRuntime};
use gantry_rhai::{RhaiOptions, RhaiRuntime};

/// A frame of the game: the tick's number and its length in seconds.
#[derive(gantry_host::Message)]
#[message(key = "Game.Tick")]
pub struct Tick {
    pub n: i64,
    pub dt: f64,
}

/// The player took damage.
#[derive(gantry_host::Message)]
#[message(key = "Player.Hurt")]
pub struct Hurt {
    /// Damage taken.
    pub damage: f64,
    /// Hit points left.
    pub hp: i64,
}

/// A blow about to land: listeners may soften it or cancel it.
#[derive(gantry_host::Message, Clone)]
#[message(key = "Combat.Hit", kind = "hook")]
pub struct Hit {
    pub attacker: String,
    pub damage: f64,
}

/// The player's object, for the mods that did not spawn it.
#[derive(gantry_host::Message)]
#[message(key = "Arena.Player", kind = "store")]
pub struct PlayerIs(pub ObjectId);

/// How many blows the player took (stored on the player by a mod).
#[derive(gantry_host::Message)]
#[message(key = "Player.Scars", kind = "store")]
pub struct Scars(pub i64);

/// One slot of the player's bag.
#[derive(gantry_host::Struct, Clone)]
#[gantry(row)]
pub struct Item {
    pub name: String,
    pub count: i64,
}

impl Item {
    fn new(name: &str, count: i64) -> Self {
        let name = name.to_owned();
        Item { name, count }
    }
}

/// What the player carries: a collection, stored on the player.
#[derive(gantry_host::Message)]
#[message(key = "Player.Bag", kind = "store")]
pub struct Bag(pub Vec<Item>);

/// What one call into a mod may take: a frame at 60 fps (a runaway
/// listener is stopped and reported, the game goes on).
const FRAME: Duration = Duration::from_micros(16_667);

const SCARS: &str = include_str!("mods/scars.lua");
const HUD: &str = include_str!("mods/hud.lua");
const SHIELD: &str = include_str!("mods/shield.rhai");

/// Plays five ticks with the signature table at `table`; what was printed
/// and reported, in order.
pub fn play(table: &Path) -> Result<Vec<String>, Box<dyn Error>> {
    // --- plumbing: the table, the hub, the runtimes, the report stream
    let mut table_file = TableFile::open(table)?;
    let hub = Hub::with_table(table_file.table().clone());
    let out = Rc::new(RefCell::new(Vec::<String>::new()));
    let lua_options = LuaOptions {
        call_budget: Some(FRAME),
        ..LuaOptions::default()
    };
    let rhai_options = RhaiOptions {
        call_budget: Some(FRAME),
        ..RhaiOptions::default()
    };
    let lua = LuaRuntime::new(hub.clone(), lua_options)?;
    let rhai = RhaiRuntime::new(hub.clone(), rhai_options)?;
    let reports = ReportStream::new();
    reports.collect_from(&hub);
    lua.on_error(reports.error_sink());
    rhai.on_error(reports.error_sink());
    let (o1, o2, o3) = (out.clone(), out.clone(), out.clone());
    lua.on_print(move |line| o1.borrow_mut().push(line.to_owned()));
    rhai.on_print(move |line| o2.borrow_mut().push(line.to_owned()));
    reports.on_item(move |item| o3.borrow_mut().push(format!("error: {item}")));
    let tick = hub.declare_message::<Tick>()?;
    let hurt = hub.declare_message::<Hurt>()?;
    let hit = hub.declare_message::<Hit>()?;
    let player_is = hub.declare_message::<PlayerIs>()?;
    hub.declare_message::<Scars>()?;
    let bag = hub.declare_message::<Bag>()?;

    // --- game: the arena, the player, its bag, and the mods
    let world = hub.create_world();
    let player = hub.spawn(world)?;
    player_is.store(&hub, world, PlayerIs(player))?;
    let (sword, potion) = (Item::new("sword", 1), Item::new("potion", 2));
    bag.store(&hub, player, Bag(vec![sword.clone(), potion]))?;
    let scars = lua.load("scars.lua", SCARS, player)?;
    lua.load("hud.lua", HUD, hub.spawn(world)?)?;
    rhai.load("shield.rhai", SHIELD, hub.spawn(world)?)?;

    // A Rust listener: the player's health, told by the typed key.
    let said = out.clone();
    let _health = hurt.listen(&hub, player, move |h: Hurt| {
        said.borrow_mut().push(format!("ouch: {} damage", h.damage));
    })?;

    let mut hp = 30;
    for (n, damage) in (1..=5).zip([2.0, 4.0, 9.0, 3.0, 5.0]) {
        tick.send(&hub, world, Tick { n, dt: 1.0 / 60.0 })?;
        let attacker = "goblin".to_owned();
        let mut blow = Hit { attacker, damage };
        if !hit.run_hook(&hub, &mut blow)?.cancelled {
            hp -= blow.damage as i64;
            let damage = blow.damage;
            hurt.send(&hub, player, Hurt { damage, hp })?;
        }
        if n == 1 {
            let potion = Item::new("potion", 1);
            bag.store(&hub, player, Bag(vec![sword.clone(), potion]))?;
            // A new version of the mod on the player, swapped in place.
            lua.reload(scars, &SCARS.replace("v1", "v2"))?;
        }
        if n == 3 {
            lua.unload(scars); // gone for tick 4
        }
        if n == 4 {
            lua.load("scars.lua", &SCARS.replace("v1", "v3"), player)?;
        }
        reports.end_frame();
    }

    // --- plumbing: save the table the run recorded
    for conflict in table_file.save(&hub.table())?.conflicts {
        out.borrow_mut().push(format!("warning: {conflict}"));
    }
    Ok(out.take())
}

fn main() -> Result<(), Box<dyn Error>> {
    let table = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("arena_game.json"));
    for line in play(&table)? {
        println!("{line}");
    }
    Ok(())
}
