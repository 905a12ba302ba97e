//! The player platform's read side: leaderboards per ruleset, player profiles and their
//! finished games. Nothing from a private game reaches anyone who did not sit in it: only
//! public games are rated, and others see a player's figures and history of public games.

use actix_web::{HttpResponse, get, web};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use rules::Ruleset;

use super::caller::Caller;
use super::errors::{ApiError, Problem};
use super::{AppState, blocking};
use crate::ratings::PROVISIONAL_GAMES;
use crate::ratings::Rating;

/// Paging of a list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct PageParams {
    /// Page size, 1–500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
    /// From `next_cursor`.
    pub cursor: Option<String>,
}

/// A player as lists name them.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlayerRef {
    /// The player's account id, as in `/v1/players/{id}`.
    pub id: String,
    /// The player's current account name (`deleted player` once deleted).
    pub name: String,
}

/// A rating in one ruleset (Weng-Lin).
#[derive(Debug, Serialize, ToSchema)]
pub struct RatingBody {
    /// The conservative estimate `mu − 3·sigma` that boards sort by.
    pub rating: f64,
    /// The estimate of skill.
    pub mu: f64,
    /// Its uncertainty.
    pub sigma: f64,
    /// Number of rated games in this ruleset (public, no prepared deal, at least two registered
    /// people at the table).
    pub games: i32,
    /// Fewer than 10 rated games: the rating still moves a lot.
    pub provisional: bool,
}

impl From<&Rating> for RatingBody {
    fn from(r: &Rating) -> Self {
        Self {
            rating: r.conservative,
            mu: r.mu,
            sigma: r.sigma,
            games: r.games,
            provisional: r.games < PROVISIONAL_GAMES,
        }
    }
}

/// A line of a leaderboard.
#[derive(Debug, Serialize, ToSchema)]
pub struct BoardLine {
    /// 1 = best.
    pub rank: i64,
    /// Who holds this rating.
    pub player: PlayerRef,
    /// Their rating in this ruleset.
    #[serde(flatten)]
    pub rating: RatingBody,
}

/// A page of a leaderboard.
#[derive(Debug, Serialize, ToSchema)]
pub struct Leaderboard {
    /// The ruleset ranked, from the path.
    pub ruleset: Ruleset,
    /// Lines, best first.
    pub items: Vec<BoardLine>,
    /// Pass as `cursor` for the next page; `null` at the end.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}

/// Figures of a player in one ruleset.
#[derive(Debug, Serialize, ToSchema)]
pub struct RulesetRecord {
    /// `6-nimmt`, `11-nimmt`, `x-nimmt` or `nimm-oder-schieb`.
    pub ruleset: String,
    /// Finished games the player sat in: the public ones, and all of them on the player's own
    /// profile.
    pub games: i64,
    /// Won (shared wins included).
    pub wins: i64,
    /// Penalty points per round on average (nimm-oder-schieb: per game of a match).
    #[schema(required = true)]
    pub average_penalty_per_round: Option<f64>,
    /// Share of games played to the end rather than resigned, 0–1.
    #[schema(required = true)]
    pub finished_share: Option<f64>,
    /// The rating, once rated.
    #[schema(required = true)]
    pub rating: Option<RatingBody>,
}

/// A player's profile.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlayerProfile {
    /// The player's account id.
    pub id: String,
    /// The player's current account name (`deleted player` once deleted).
    pub name: String,
    /// A guest account (guests are not rated).
    pub guest: bool,
    /// When the account was made (UTC, RFC 3339).
    #[schema(format = DateTime)]
    pub member_since: String,
    /// Per ruleset; from public games, and from all games for the player themself.
    pub rulesets: Vec<RulesetRecord>,
}

/// A finished game in a player's history.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlayedGame {
    /// The game's id, as in `/v1/games/{id}`.
    pub game_id: String,
    /// `6-nimmt`, `11-nimmt`, `x-nimmt` or `nimm-oder-schieb`.
    pub ruleset: String,
    /// When it finished (UTC, RFC 3339).
    #[schema(format = DateTime)]
    pub finished_at: String,
    /// The player's seat.
    pub seat: i32,
    /// Their place, 1 = best.
    pub place: i32,
    /// Seats of the game.
    pub players: i32,
    /// Their final total: bullheads in the row games, card points minus chips in nimm-oder-schieb.
    pub total: i32,
    /// Among the winners.
    pub won: bool,
    /// They resigned and a bot finished the game for them (they place last).
    pub resigned: bool,
    /// The game was public.
    pub public: bool,
    /// The game changed ratings.
    pub rated: bool,
    /// Their rating after it, when rated.
    #[schema(required = true)]
    pub rating_after: Option<f64>,
}

/// A page of a player's history.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlayedGamePage {
    /// The finished games, newest first.
    pub items: Vec<PlayedGame>,
    /// Pass as `cursor` for the next page; `null` at the end.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}

#[expect(clippy::cast_precision_loss, reason = "averages for people to read")]
fn ratio(part: i64, whole: i64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// The leaderboard of a ruleset: registered players by their conservative rating.
#[utoipa::path(
    operation_id = "get_leaderboard",
    tag = "players",
    params(("name" = String, Path, description = "Ruleset, e.g. `6-nimmt`"), PageParams),
    responses(
        (status = 200, body = Leaderboard),
        (status = 404, description = "`not_found`: no such ruleset", body = Problem)
    )
)]
#[get("/v1/rulesets/{name}/leaderboard")]
pub async fn leaderboard(
    state: web::Data<AppState>,
    _caller: Caller,
    path: web::Path<String>,
    params: web::Query<PageParams>,
) -> Result<HttpResponse, ApiError> {
    let ruleset = Ruleset::from_name(&path).ok_or(ApiError::NotFound("ruleset"))?;
    let limit = super::page_limit(params.limit)?;
    let cursor = params.into_inner().cursor;
    let board = blocking(move || {
        state
            .ratings
            .leaderboard(ruleset.name(), cursor.as_deref(), limit)
    })
    .await?;
    let items = board
        .lines
        .into_iter()
        .map(|line| BoardLine {
            rank: line.rank,
            rating: RatingBody::from(&line.rating),
            player: PlayerRef {
                id: line.account_id,
                name: line.name,
            },
        })
        .collect();
    Ok(HttpResponse::Ok().json(Leaderboard {
        ruleset,
        items,
        next_cursor: board.next_cursor,
    }))
}

/// A player's profile: name, member since, and per ruleset games, wins, penalty per
/// round, share finished and rating.
#[utoipa::path(
    operation_id = "get_player",
    tag = "players",
    params(("id" = String, Path, description = "Account id")),
    responses(
        (status = 200, body = PlayerProfile),
        (status = 404, description = "`not_found`", body = Problem)
    )
)]
#[get("/v1/players/{id}")]
pub async fn player(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id: crate::ids::AccountId = super::parse_id(&path, "player")?;
    let profile = blocking(move || state.ratings.profile(&id, &caller.id)).await?;
    let mut rulesets: Vec<RulesetRecord> = profile
        .stats
        .iter()
        .map(|s| RulesetRecord {
            ruleset: s.ruleset.clone(),
            games: s.games,
            wins: s.wins,
            average_penalty_per_round: ratio(s.penalty, s.rounds),
            finished_share: ratio(s.games - s.resigned, s.games),
            rating: profile
                .ratings
                .iter()
                .find(|r| r.ruleset == s.ruleset)
                .map(RatingBody::from),
        })
        .collect();
    // A rating without a visible game (possible only for another viewer: it comes from
    // public games, so this does not happen) still shows.
    for r in &profile.ratings {
        if !rulesets.iter().any(|x| x.ruleset == r.ruleset) {
            rulesets.push(RulesetRecord {
                ruleset: r.ruleset.clone(),
                games: 0,
                wins: 0,
                average_penalty_per_round: None,
                finished_share: None,
                rating: Some(RatingBody::from(r)),
            });
        }
    }
    Ok(HttpResponse::Ok().json(PlayerProfile {
        id: profile.id,
        name: profile.name,
        guest: profile.guest,
        member_since: profile.member_since.to_rfc3339(),
        rulesets,
    }))
}

/// A player's finished games, newest first: the public ones, and all of them for the
/// player themself.
#[utoipa::path(
    operation_id = "list_player_games",
    tag = "players",
    params(("id" = String, Path, description = "Account id"), PageParams),
    responses(
        (status = 200, body = PlayedGamePage),
        (status = 404, description = "`not_found`", body = Problem)
    )
)]
#[get("/v1/players/{id}/games")]
pub async fn player_games(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    params: web::Query<PageParams>,
) -> Result<HttpResponse, ApiError> {
    let id: crate::ids::AccountId = super::parse_id(&path, "player")?;
    let limit = super::page_limit(params.limit)?;
    let cursor = params.into_inner().cursor;
    let history = blocking(move || {
        state
            .ratings
            .history(&id, &caller.id, cursor.as_deref(), limit)
    })
    .await?;
    let items = history
        .results
        .into_iter()
        .map(|r| PlayedGame {
            game_id: r.game_id,
            ruleset: r.ruleset,
            finished_at: r.finished_at.to_rfc3339(),
            seat: r.seat,
            place: r.place,
            players: r.players,
            total: r.total,
            won: r.won,
            resigned: r.resigned,
            public: r.public,
            rated: r.rated,
            rating_after: r.rating_after,
        })
        .collect();
    Ok(HttpResponse::Ok().json(PlayedGamePage {
        items,
        next_cursor: history.next_cursor,
    }))
}
