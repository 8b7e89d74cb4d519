//! `--budget`, `--time-limit`, `--call-budget-us` and `--memory`: what one
//! script call may spend, set from the command line for `gantry run` and
//! `explain --ticks`.
//!
//! Each flag overrides the runtimes' own defaults, which the help states
//! from the options themselves (so help and behaviour cannot drift apart).
//! Zero is refused: a run in which no call may run at all is a typo, and an
//! unlimited budget is what the time limit is there to prevent.

use std::time::Duration;

use gantry_lua::runtime::LuaOptions;
use gantry_rhai::RhaiOptions;

/// One mebibyte.
const MIB: u64 = 1 << 20;

/// The limits one run's script calls live under (the help of each flag,
/// with its default, is built from the runtimes' options below).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LimitArgs {
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u64).range(1..),
        help = budget_help(),
    )]
    pub budget: Option<u64>,
    #[arg(
        long,
        value_name = "MS",
        value_parser = clap::value_parser!(u64).range(1..),
        help = time_limit_help(),
    )]
    pub time_limit: Option<u64>,
    #[arg(
        long,
        value_name = "US",
        value_parser = clap::value_parser!(u64).range(1..),
        help = call_budget_help(),
    )]
    pub call_budget_us: Option<u64>,
    #[arg(
        long,
        value_name = "MIB",
        value_parser = clap::value_parser!(u64).range(1..=1 << 20),
        help = memory_help(),
    )]
    pub memory: Option<u64>,
}

impl LimitArgs {
    /// Both runtimes' options with these limits in place of the defaults.
    pub fn apply(&self, lua: &mut LuaOptions, rhai: &mut RhaiOptions) {
        if let Some(budget) = self.budget {
            lua.budget = Some(budget);
            rhai.budget = Some(budget);
            rhai.top_level_budget = Some(budget);
        }
        if let Some(ms) = self.time_limit {
            let limit = Some(Duration::from_millis(ms));
            lua.time_limit = limit;
            rhai.time_limit = limit;
        }
        if let Some(us) = self.call_budget_us {
            let budget = Some(Duration::from_micros(us));
            lua.call_budget = budget;
            rhai.call_budget = budget;
        }
        if let Some(mib) = self.memory {
            let bytes = Some(usize::try_from(mib * MIB).unwrap_or(usize::MAX));
            lua.memory_limit = bytes;
            lua.hub_memory_limit = bytes;
            rhai.hub_memory_limit = bytes;
        }
    }
}

fn budget_help() -> String {
    let (lua, rhai) = (LuaOptions::default(), RhaiOptions::default());
    let steps = |n: Option<u64>| n.map_or("unlimited".to_owned(), |n| n.to_string());
    let rhai_default = if rhai.budget == rhai.top_level_budget {
        steps(rhai.budget)
    } else {
        format!(
            "{} per handler call, {} per top level",
            steps(rhai.budget),
            steps(rhai.top_level_budget)
        )
    };
    format!(
        "Steps one script call (a top level, a listener, a hook, a reply) may run: a step is a \
         Lua VM instruction or a Rhai operation, a Rhai operation costing several Lua \
         instructions, so the defaults differ to take about the same time \
         [default: Lua {}; Rhai {rhai_default}]",
        steps(lua.budget),
    )
}

fn time_limit_help() -> String {
    let (lua, rhai) = (LuaOptions::default(), RhaiOptions::default());
    let ms = |d: Option<Duration>| d.map_or("unlimited".to_owned(), |d| d.as_millis().to_string());
    let default = if lua.time_limit == rhai.time_limit {
        ms(lua.time_limit)
    } else {
        format!("Lua {}, Rhai {}", ms(lua.time_limit), ms(rhai.time_limit))
    };
    format!(
        "Wall-clock milliseconds one script call may take, everything it sets off included \
         [default: {default}]"
    )
}

fn call_budget_help() -> String {
    let (lua, rhai) = (LuaOptions::default(), RhaiOptions::default());
    let us = |d: Option<Duration>| d.map_or("none".to_owned(), |d| d.as_micros().to_string());
    let default = if lua.call_budget == rhai.call_budget {
        us(lua.call_budget)
    } else {
        format!("Lua {}, Rhai {}", us(lua.call_budget), us(rhai.call_budget))
    };
    format!(
        "Wall-clock microseconds one script call may take, counted from its first step: what a \
         frame can afford (2000 at 60 fps with room to spare); a listener past it is stopped at \
         its line and the others run [default: {default}]"
    )
}

fn memory_help() -> String {
    let (lua, rhai) = (LuaOptions::default(), RhaiOptions::default());
    let mib = |bytes: Option<usize>| {
        bytes.map_or("unlimited".to_owned(), |b| (b as u64 / MIB).to_string())
    };
    format!(
        "MiB of memory the scripts may use: the Lua state's, and, for each language, what its \
         scripts hold in the hub (stored messages, tables, listeners, keys) \
         [default: Lua state {}; hub {} for Lua, {} for Rhai]",
        mib(lua.memory_limit),
        mib(lua.hub_memory_limit),
        mib(rhai.hub_memory_limit),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_flag_sets_its_limit_in_both_runtimes_and_the_rest_stay_default() {
        let (mut lua, mut rhai) = (LuaOptions::default(), RhaiOptions::default());
        LimitArgs {
            budget: Some(5_000),
            time_limit: Some(250),
            call_budget_us: Some(2_000),
            memory: None,
        }
        .apply(&mut lua, &mut rhai);
        assert_eq!(lua.budget, Some(5_000));
        assert_eq!(rhai.budget, Some(5_000));
        assert_eq!(rhai.top_level_budget, Some(5_000));
        assert_eq!(lua.time_limit, Some(Duration::from_millis(250)));
        assert_eq!(rhai.time_limit, Some(Duration::from_millis(250)));
        assert_eq!(lua.call_budget, Some(Duration::from_millis(2)));
        assert_eq!(rhai.call_budget, Some(Duration::from_millis(2)));
        assert_eq!(lua.memory_limit, LuaOptions::default().memory_limit);
        assert_eq!(
            rhai.hub_memory_limit,
            RhaiOptions::default().hub_memory_limit
        );
        LimitArgs {
            memory: Some(64),
            ..LimitArgs::default()
        }
        .apply(&mut lua, &mut rhai);
        assert_eq!(lua.memory_limit, Some(64 << 20));
        assert_eq!(lua.hub_memory_limit, Some(64 << 20));
        assert_eq!(rhai.hub_memory_limit, Some(64 << 20));
    }
}
