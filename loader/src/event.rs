//! What the loader tells its host while it works: errors as they happen,
//! the end of each load or tick, what it reloaded, what scripts print.
//!
//! A host gets data, not log lines, and decides where each goes: the CLI
//! prints errors to stderr once per fault and script output to stdout; a
//! game shows them in its console. Texts name the user's things (a
//! script's `file:line`, a mod's `mod.toml`); in a game folder every file
//! is named from the game folder (`mods/core/main.lua`), so
//! [`crate::ModNames::mod_of`] can tell which mod a text is about.

/// One thing the loader has to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// The hub's report of a refused send or a failing listener. The same
    /// fault may come again as an [`Event::Error`] of the script that sent
    /// (its text carries the report's whole).
    Report(&'a str),
    /// A script's error (compile, top level, listener) or a mod the loader
    /// could not load.
    Error(&'a str),
    /// A warning: something the user should fix that did not stop anything.
    Warning(&'a str),
    /// A note about what the loader did instead (`the previous version
    /// keeps running`).
    Note(&'a str),
    /// Progress: `[reloading main.lua]`, `[unloaded mod ui]`.
    Progress(&'a str),
    /// A line a script printed.
    Print(&'a str),
    /// One load or tick is over: a later error is another fault.
    StepEnd,
}

impl Event<'_> {
    /// Whether the event makes the run a failure.
    pub fn is_error(&self) -> bool {
        matches!(self, Event::Report(_) | Event::Error(_))
    }
}

/// Where events go.
pub type Sink = Box<dyn Fn(Event<'_>)>;

/// The default sink: everything to `tracing`.
pub(crate) fn log(event: Event<'_>) {
    match event {
        Event::Report(text) | Event::Error(text) => tracing::error!("{text}"),
        Event::Warning(text) => tracing::warn!("{text}"),
        Event::Note(text) | Event::Progress(text) | Event::Print(text) => {
            tracing::info!("{text}")
        }
        Event::StepEnd => {}
    }
}
