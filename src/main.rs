//! `gantry`: one binary for the mod host, the checker, the stub generator and
//! the language server. Each subcommand is a thin shell over a library crate.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod out;

mod bridge;
mod contract;
mod doc_cmd;
mod error_printer;
mod explain;
mod folder;
mod interrupt;
mod limits;
mod profile_out;
mod replay_cmd;
mod run;
mod table_cmd;
mod test_cmd;
mod tools;
mod trace_out;
mod why;

#[derive(Parser)]
#[command(
    name = "gantry",
    version,
    about = "A string-keyed message hub for games and mods"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the game or mod in DIR: load its mods' scripts (dependencies
    /// first) into one world, then tick it.
    Run {
        /// The game folder (DIR/mods/*/mod.toml) or mod folder.
        dir: PathBuf,
        /// How many `Game.Tick` messages to send after the top levels
        /// (default 1; with --watch, until Ctrl-C).
        #[arg(long)]
        ticks: Option<u32>,
        /// The signature table file (default DIR/.gantry/signatures.json).
        #[arg(long, conflicts_with = "no_table")]
        table: Option<PathBuf>,
        /// Neither load nor save a signature table.
        #[arg(long)]
        no_table: bool,
        /// Keep ticking and reload a script when its file changes; Ctrl-C
        /// saves the table and exits.
        #[arg(long)]
        watch: bool,
        /// The length of a tick in milliseconds when watching.
        #[arg(long, default_value_t = 100)]
        tick_ms: u64,
        /// Print one line per dispatch to stderr: tick, key, source,
        /// arguments, each listener called with its order and time.
        #[arg(long)]
        trace: bool,
        /// Trace only KEY and the keys below it (implies --trace).
        #[arg(long, value_name = "KEY")]
        trace_key: Option<String>,
        /// After the run, say for every listener of KEY whether it fired and,
        /// if not, why (repeatable).
        #[arg(long, value_name = "KEY")]
        why: Vec<String>,
        /// Change no signature table: say what the run would have added or
        /// changed, and exit 1 if it would have (for CI, as `cargo --locked`).
        #[arg(long, conflicts_with = "no_table")]
        locked: bool,
        /// Record every dispatch into the mods and what they send out to
        /// FILE (JSON lines), for `gantry replay`.
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
        /// Share keys with other game servers through the NATS server at
        /// URL (nats://host:port): game.toml's [bridge] says which, and this
        /// replaces its `url`.
        #[arg(long, value_name = "URL")]
        bridge: Option<String>,
        #[command(flatten)]
        profile: profile_out::ProfileArgs,
        #[command(flatten)]
        limits: limits::LimitArgs,
    },
    /// Check every script in DIR against the signature table, like the
    /// language server would; exits 1 when any finding is an error.
    Check {
        /// The mod folder.
        dir: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = tools::Format::Text)]
        format: tools::Format,
        /// Exit 1 on warnings too (for CI).
        #[arg(long)]
        deny_warnings: bool,
    },
    /// Write LuaLS/EmmyLua meta files and Rhai definitions for the table of DIR.
    Stubs {
        /// The mod folder.
        dir: PathBuf,
        /// Where to write (default DIR/.gantry/stubs/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Read this table file instead of DIR/.gantry/signatures.json.
        #[arg(long)]
        table: Option<PathBuf>,
        /// Write a LuaLS addon (config.json and library/) into this folder
        /// instead of the stubs.
        #[arg(long, value_name = "ADDON_DIR")]
        luals_addon: Option<PathBuf>,
    },
    /// Explain KEY in the mod in DIR: who sends it, who listens, and why a
    /// listener may not fire (nobody sends, a near-miss key, too many
    /// parameters). With --ticks N it first runs the mod for N ticks and
    /// says, for each listener of KEY, whether it fired and if not why (as
    /// `gantry run DIR --why KEY`).
    Explain {
        /// The mod folder.
        dir: PathBuf,
        /// The key to explain (`Player.Hurt`).
        key: String,
        /// Read this table file instead of DIR/.gantry/signatures.json.
        #[arg(long)]
        table: Option<PathBuf>,
        /// Run the mod for this many ticks first and report what happened.
        #[arg(long)]
        ticks: Option<u32>,
        #[command(flatten)]
        limits: limits::LimitArgs,
    },
    /// Write the book's API reference (generated from the API table) into OUT.
    Doc {
        /// The folder of the reference page (book/src/reference/).
        #[arg(long)]
        out: PathBuf,
    },
    /// Run the mod's tests (DIR/tests/*.lua, *.rhai), each case in a fresh
    /// game with the mod loaded; exits 1 when a case fails.
    Test {
        /// The mod folder.
        dir: PathBuf,
        /// Also write the results as JUnit XML to FILE (for CI).
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        #[command(flatten)]
        limits: limits::LimitArgs,
    },
    /// Replay a recording (`gantry run --record FILE`) on the mods in DIR
    /// and compare what they send with what was recorded; exits 1 at the
    /// first difference.
    Replay {
        /// The recording.
        file: PathBuf,
        /// The game folder or mod folder.
        dir: PathBuf,
        #[command(flatten)]
        limits: limits::LimitArgs,
    },
    /// Serve the language server over stdio.
    Lsp,
    /// Print the signature table of a mod folder (DIR/.gantry/signatures.json).
    Table {
        /// The mod folder.
        dir: PathBuf,
        /// Read this table file instead.
        #[arg(long)]
        table: Option<PathBuf>,
        /// Print the raw JSON instead of the readable summary.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("GANTRY_LOG")
                // Script errors are printed as `error:` lines already; the
                // libraries' warnings about them would repeat each one.
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            dir,
            ticks,
            table,
            no_table,
            watch,
            tick_ms,
            trace,
            trace_key,
            why,
            locked,
            record,
            bridge,
            limits,
            profile,
        } => run::run(run::RunArgs {
            dir,
            ticks,
            table,
            no_table,
            watch,
            tick_ms,
            trace,
            trace_key,
            why,
            why_on_stdout: false,
            limits,
            locked,
            record,
            bridge,
            profile,
        }),
        Command::Check {
            dir,
            format,
            deny_warnings,
        } => tools::check(&dir, format, deny_warnings),
        Command::Stubs {
            dir,
            out,
            table,
            luals_addon,
        } => tools::stubs(
            &dir,
            out.as_deref(),
            table.as_deref(),
            luals_addon.as_deref(),
        ),
        Command::Explain {
            dir,
            key,
            table,
            ticks,
            limits,
        } => explain::run_then_explain(dir, key, table, ticks, limits),
        Command::Doc { out } => doc_cmd::run(&out),
        Command::Test { dir, junit, limits } => test_cmd::run(&dir, junit, &limits),
        Command::Replay { file, dir, limits } => replay_cmd::run(&file, &dir, &limits),
        Command::Lsp => tools::lsp(),
        Command::Table { dir, table, json } => table_cmd::run(&dir, table.as_deref(), json),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            out::errln!("gantry: {error:#}");
            ExitCode::from(2)
        }
    }
}
