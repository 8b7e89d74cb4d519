//! The sandbox: what a script can reach (isolation) and each limit against a
//! script that tries to get round it (limits).

mod call_budget;
mod isolation;
mod limits;
