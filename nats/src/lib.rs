//! # gantry-nats — a hub's keys across game servers over NATS
