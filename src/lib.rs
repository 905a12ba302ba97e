//! Stammtisch: a game server for the 6 nimmt! family and Nimm oder schieb.
//!
//! Layers: [`http`] (handlers, errors, OpenAPI) → [`games`] (load → decide → append, live
//! streams) → [`store`] (event store on SQLite or PostgreSQL). The rules live in the pure
//! `rules` crate.

pub mod accounts;
pub mod address;
pub mod analytics;
pub mod auth;
pub mod cache;
pub mod clock;
pub mod config;
pub mod contention;
pub mod export;
pub mod fairness;
pub mod games;
pub mod group;
pub mod http;
pub mod ids;
pub mod limits;
pub mod lookup;
pub mod mail;
pub mod notify;
pub mod outbox;
pub mod pads;
pub mod push;
pub mod ratings;
pub mod store;
pub mod sweeper;
pub mod telemetry;
pub mod tournaments;
pub mod vacation;
pub mod webhooks;
