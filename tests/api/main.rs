//! HTTP tests against a real `stammtisch` process on a real database, SQLite and
//! PostgreSQL both (each test body runs once per backend).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::missing_panics_doc)]

mod support;

mod accounts;
mod analytics;
mod analytics_views;
mod auth;
mod bad_input;
mod browser;
mod cache;
mod clocks;
mod clusters;
mod concurrency;
mod export;
mod faults;
mod fill;
mod games;
mod group_commit;
mod hardening;
mod hidden;
mod idempotency;
mod internet;
mod invites;
mod l10n;
mod mail;
mod nimm_oder_schieb;
mod openapi;
mod platform;
mod play_by_mail;
mod push;
mod replica;
mod rulesets;
mod scenarios;
mod scorepads;
mod store;
mod streams;
mod tournament_store;
mod tournaments;
mod vacation;
mod webhooks;
