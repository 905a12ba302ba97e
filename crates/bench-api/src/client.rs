//! A small asynchronous client of the Stammtisch HTTP API: guests, games, commands, views,
//! and a player that picks legal 6-nimmt moves for both seats of a 2-person game.
//!
//! Owns only requests to the server under test (127.0.0.1). It parses only the fields of a
//! game view that choosing a move needs.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde::Deserialize;
use serde_json::{Value, json};

/// One reqwest client (a connection pool) for every base URL.
#[must_use]
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .tcp_nodelay(true)
        .pool_max_idle_per_host(1024)
        .build()
        .unwrap_or_default()
}

/// A guest account's bearer token.
#[derive(Clone, Debug)]
pub struct Player {
    /// `Bearer …`.
    pub auth: String,
}

/// The parts of a game view the benchmarks use.
#[derive(Clone, Debug, Deserialize)]
pub struct View {
    /// Game id.
    pub id: String,
    /// Number of events.
    pub version: i32,
    /// `lobby`, `active`, `finished`.
    pub status: String,
    /// Round number.
    #[serde(default)]
    pub round: i32,
    /// The code that lets a second person join a private game (seated players see it).
    #[serde(default)]
    pub invite_code: Option<String>,
    /// The caller's seat and hand.
    pub you: Option<You>,
    /// Who must act.
    #[serde(default)]
    pub awaiting: Vec<Ask>,
    /// What the caller may send.
    #[serde(default)]
    pub legal: Vec<Value>,
}

/// The caller's private part of a view.
#[derive(Clone, Debug, Deserialize)]
pub struct You {
    /// Hand (row games: card numbers).
    #[serde(default)]
    pub hand: Vec<u32>,
    /// The face-down selection, if any.
    pub selected: Option<u32>,
}

/// A seat that must act.
#[derive(Clone, Debug, Deserialize)]
pub struct Ask {
    /// The seat's index in the game (0-based), as the server's `awaiting` gives it.
    pub seat: usize,
    /// Command name.
    pub action: String,
}

/// A server's base URL with the shared client.
#[derive(Clone)]
pub struct Api {
    /// The shared client.
    pub http: reqwest::Client,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

/// A reply: status and body bytes.
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// The body as received, undecoded.
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as a game view, when the status is `ok`.
    ///
    /// # Errors
    /// Another status or a body that is no view.
    pub fn view(&self, ok: u16) -> anyhow::Result<View> {
        if self.status != ok {
            bail!(
                "status {}: {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            );
        }
        serde_json::from_slice(&self.body).context("reading a game view")
    }
}

impl Api {
    /// POSTs JSON.
    ///
    /// # Errors
    /// Transport failure.
    pub async fn post(
        &self,
        path: &str,
        auth: Option<&str>,
        body: &Value,
    ) -> anyhow::Result<Reply> {
        let mut req = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(serde_json::to_vec(body)?);
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        let resp = req.send().await?;
        let status = resp.status().as_u16();
        let body = resp.bytes().await?.to_vec();
        Ok(Reply { status, body })
    }

    /// GETs a path.
    ///
    /// # Errors
    /// Transport failure.
    pub async fn get(&self, path: &str, auth: Option<&str>) -> anyhow::Result<Reply> {
        let mut req = self.http.get(format!("{}{path}", self.base));
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        let resp = req.send().await?;
        let status = resp.status().as_u16();
        let body = resp.bytes().await?.to_vec();
        Ok(Reply { status, body })
    }

    /// A new guest account.
    ///
    /// # Errors
    /// Transport failure or a refusal.
    pub async fn guest(&self, name: &str) -> anyhow::Result<Player> {
        let r = self
            .post("/v1/guests", None, &json!({ "name": name }))
            .await?;
        if r.status != 201 {
            bail!("guest: status {}", r.status);
        }
        let v: Value = serde_json::from_slice(&r.body)?;
        let token = v["access_token"].as_str().context("access_token")?;
        Ok(Player {
            auth: format!("Bearer {token}"),
        })
    }

    /// Creates a 2-person 6-nimmt game.
    ///
    /// # Errors
    /// Transport failure or a refusal.
    pub async fn create_game(&self, host: &Player, public: bool) -> anyhow::Result<Reply> {
        self.post(
            "/v1/games",
            Some(&host.auth),
            &json!({ "ruleset": "6-nimmt", "players": 2, "public": public }),
        )
        .await
    }

    /// Sends a command.
    ///
    /// # Errors
    /// Transport failure.
    pub async fn command(&self, player: &Player, game: &str, cmd: &Value) -> anyhow::Result<Reply> {
        self.post(
            &format!("/v1/games/{game}/commands"),
            Some(&player.auth),
            cmd,
        )
        .await
    }

    /// The game as `player` sees it.
    ///
    /// # Errors
    /// Transport failure or a refusal.
    pub async fn view(&self, player: &Player, game: &str) -> anyhow::Result<View> {
        self.get(&format!("/v1/games/{game}"), Some(&player.auth))
            .await?
            .view(200)
    }
}

/// A tiny deterministic random source (xorshift64) for move choices.
pub struct Dice(u64);

impl Dice {
    /// Seeded; never zero.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        if n == 0 {
            0
        } else {
            usize::try_from(self.0 % n as u64).unwrap_or(0)
        }
    }
}

/// What one sent command cost and produced.
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    /// From sending the request to having read the whole answer.
    pub latency: Duration,
    /// Events the command appended (version after − version before).
    pub events: i32,
}

/// Counters of one table's play.
#[derive(Default, Debug)]
pub struct PlayStats {
    /// `GET` views needed because no cached view told the legal moves.
    pub reads: u64,
    /// Guessed moves that were refused (`422`/`409`); each is followed by a read.
    pub refused: u64,
}

/// Both seats of a 2-person 6-nimmt game, played by one task: the latest view each seat got
/// from its own commands, and what the latest answer said about the whole table.
pub struct Table {
    /// Game id.
    pub id: String,
    players: [Player; 2],
    views: [Option<View>; 2],
    latest: View,
}

impl Table {
    /// Creates a game for `players[0]`, lets `players[1]` join and starts it. Every command
    /// is passed to `on_sent`.
    ///
    /// # Errors
    /// A failed request.
    pub async fn start(
        api: &Api,
        players: [Player; 2],
        public: bool,
        on_sent: &mut impl FnMut(Sent),
    ) -> anyhow::Result<Self> {
        let t = Instant::now();
        let created = api.create_game(&players[0], public).await?.view(201)?;
        on_sent(Sent {
            latency: t.elapsed(),
            events: created.version,
        });
        let id = created.id.clone();
        let mut table = Self {
            id: id.clone(),
            players,
            views: [Some(created.clone()), None],
            latest: created,
        };
        let join = match &table.latest.invite_code {
            Some(code) => json!({ "type": "join", "invite_code": code }),
            None => json!({ "type": "join" }),
        };
        if table.send(api, 1, &join, on_sent).await?.is_none() {
            bail!("join refused");
        }
        if table
            .send(api, 0, &json!({ "type": "start" }), on_sent)
            .await?
            .is_none()
        {
            bail!("start refused");
        }
        Ok(table)
    }

    /// Whether the game is over.
    #[must_use]
    pub fn finished(&self) -> bool {
        self.latest.status == "finished"
    }

    /// Sends one command for `seat` and keeps the answer.
    async fn send(
        &mut self,
        api: &Api,
        seat: usize,
        cmd: &Value,
        on_sent: &mut impl FnMut(Sent),
    ) -> anyhow::Result<Option<View>> {
        let before = self.latest.version;
        let t = Instant::now();
        let reply = api.command(&self.players[seat], &self.id, cmd).await?;
        let latency = t.elapsed();
        if reply.status == 422 || reply.status == 409 {
            return Ok(None);
        }
        let view = reply.view(200).with_context(|| format!("command {cmd}"))?;
        on_sent(Sent {
            latency,
            events: view.version - before,
        });
        self.latest = view.clone();
        self.views[seat] = Some(view.clone());
        Ok(Some(view))
    }

    /// Makes one move for a seat that must act, choosing at random among its legal moves.
    /// Uses the seat's own last view where it still tells the legal moves, else reads the
    /// view first. Returns false when nobody must act.
    ///
    /// # Errors
    /// A failed request, or a game in which no legal move is found.
    pub async fn step(
        &mut self,
        api: &Api,
        dice: &mut Dice,
        stats: &mut PlayStats,
        on_sent: &mut impl FnMut(Sent),
    ) -> anyhow::Result<bool> {
        let asks = self.latest.awaiting.clone();
        // Prefer a seat whose own view is current.
        let Some(ask) = asks
            .iter()
            .find(|a| {
                self.views
                    .get(a.seat)
                    .and_then(Option::as_ref)
                    .is_some_and(|v| v.version == self.latest.version)
            })
            .or_else(|| asks.first())
            .cloned()
        else {
            return Ok(false);
        };
        if ask.seat > 1 {
            bail!("seat {} in a 2-person game", ask.seat);
        }
        if let Some(cmd) = self.guess(&ask, dice) {
            if self.send(api, ask.seat, &cmd, on_sent).await?.is_some() {
                return Ok(true);
            }
            stats.refused += 1;
        }
        // The cached view cannot tell (or the guess was refused): read it.
        stats.reads += 1;
        let view = api.view(&self.players[ask.seat], &self.id).await?;
        self.views[ask.seat] = Some(view.clone());
        let moves: Vec<&Value> = view
            .legal
            .iter()
            .filter(|c| c["type"] != "resign")
            .collect();
        if moves.is_empty() {
            // The answer we acted on is older than the game: take the fresh view as latest.
            if view.version >= self.latest.version {
                self.latest = view;
                return Ok(!self.latest.awaiting.is_empty());
            }
            bail!("seat {} is awaited but has no legal move", ask.seat);
        }
        let cmd = moves[dice.below(moves.len())].clone();
        if self.send(api, ask.seat, &cmd, on_sent).await?.is_none() {
            bail!("a legal move from a fresh view was refused: {cmd}");
        }
        Ok(true)
    }

    /// A legal move for `ask` from the seat's own last view, if that view still tells it.
    fn guess(&self, ask: &Ask, dice: &mut Dice) -> Option<Value> {
        let own = self.views.get(ask.seat)?.as_ref()?;
        if own.version == self.latest.version {
            let moves: Vec<&Value> = own.legal.iter().filter(|c| c["type"] != "resign").collect();
            return (!moves.is_empty()).then(|| moves[dice.below(moves.len())].clone());
        }
        match ask.action.as_str() {
            // The hand changes only by the seat's own plays and by a new deal.
            "play_card" if own.round == self.latest.round => {
                let you = own.you.as_ref()?;
                let hand: Vec<u32> = you
                    .hand
                    .iter()
                    .copied()
                    .filter(|c| Some(*c) != you.selected)
                    .collect();
                (!hand.is_empty())
                    .then(|| json!({ "type": "play_card", "card": hand[dice.below(hand.len())] }))
            }
            // Any row may be taken.
            "take_row" => Some(json!({ "type": "take_row", "row": dice.below(4) })),
            _ => None,
        }
    }
}
