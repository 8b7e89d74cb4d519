//! A send of scalar arguments to Rust listeners allocates nothing, proven
//! with a counting global allocator. It counts only on the thread
//! measuring: the test harness's own threads allocate now and then.
//!
//! A binary of its own: the global allocator would count every other test
//! of the crate too.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use gantry_host::{HookOptions, Hub, ListenOptions, Source, Value};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set on the thread being measured (a `const` thread-local: reading
    /// it allocates nothing, as an allocator needs).
    static MEASURING: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if MEASURING.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    MEASURING.with(|m| m.set(true));
    f();
    MEASURING.with(|m| m.set(false));
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[test]
fn scalar_send_to_rust_listeners_allocates_nothing() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let sum = std::rc::Rc::new(Cell::new(0.0));
    let mut handles = Vec::new();
    for scope in [Source::Object(obj), Source::World(world), Source::Global] {
        let s = sum.clone();
        handles.push(
            hub.listen_with(
                "Player.Hurt",
                scope,
                ListenOptions::new(),
                move |hp: i64, dmg: f64| s.set(s.get() + hp as f64 + dmg),
            )
            .unwrap(),
        );
    }
    let key = hub.key("Player.Hurt").unwrap();
    let sends = |count: i64| {
        for i in 0..count {
            hub.send(key, obj, (i, 0.5f64)).unwrap();
            hub.send(key, Source::Global, (i, 0.5f64)).unwrap();
        }
    };
    // Warm up: the first send from each call site records the signature and the site.
    sends(1);
    let n = allocations_during(|| sends(1000));
    assert_eq!(n, 0, "allocations during 2000 scalar sends");
    assert!(sum.get() > 0.0);

    // The same through a typed key (the typed view of each lane).
    let typed = hub.typed_key::<(i64, f64)>("Player.Hurt").unwrap();
    let typed_sends = |count: i64| {
        for i in 0..count {
            hub.send(typed, obj, (i, 0.5f64)).unwrap();
            hub.send(typed, Source::Global, (i, 0.5f64)).unwrap();
        }
    };
    typed_sends(1);
    let n = allocations_during(|| typed_sends(1000));
    assert_eq!(n, 0, "allocations during 2000 typed scalar sends");

    // A hook nobody listens to costs no allocation either.
    let n = allocations_during(|| {
        let mut payload = Value::Int(1);
        for _ in 0..1000 {
            assert!(!hub.has_hook_listeners("Combat.Damage.Fire"));
            hub.run_hook("Combat.Damage.Fire", &mut payload).unwrap();
        }
    });
    assert_eq!(n, 0, "allocations during 1000 runs of an unheard hook");
    let _ = HookOptions::new();
}
