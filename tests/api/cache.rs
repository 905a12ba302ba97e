//! The state cache: loads start from a cached state while it holds the game, and a server
//! without it (`STATE_CACHE_MB=0`) plays the same game to the same views by replaying.

use serde_json::json;

use crate::both;
use crate::support::{Api, Backend, Player, TestDb, TestServer, cards, metric, seated_game};

/// Plays one turn of a 2-person 6 nimmt! game: both play their lowest card, and row 0 is
/// taken whenever the game asks. Returns the host's view afterwards.
fn play_turn(api: &Api, game: &str, people: &[&Player; 2]) -> serde_json::Value {
    for p in people {
        let hand = cards(&api.view(p, game)["you"]["hand"]);
        api.ok(p, game, &json!({ "type": "play_card", "card": hand[0] }));
    }
    loop {
        let view = api.view(people[0], game);
        let asked = view["awaiting"]
            .as_array()
            .and_then(|a| a.iter().find(|a| a["action"] == "take_row").cloned());
        let Some(a) = asked else { return view };
        let seat = usize::try_from(a["seat"].as_u64().unwrap()).unwrap();
        api.ok(people[seat], game, &json!({ "type": "take_row", "row": 0 }));
    }
}

/// Three turns on a server with the cache and on one without: the same deal (a prepared
/// one is not needed: each game is checked against itself), every load after the first a
/// hit on one and a replay on the other, and both games where the rules put them.
fn the_cache_serves_loads_and_a_server_without_it_replays(backend: Backend) {
    for (cache, expect_hits) in [("256", true), ("0", false)] {
        let server =
            TestServer::start_with_env(TestDb::new(backend), backend, &[("STATE_CACHE_MB", cache)]);
        let api = server.client();
        let host = api.guest("host");
        let guest = api.guest("guest");
        let game = seated_game(&api, &host, std::slice::from_ref(&guest), 0, &json!({}));
        let hits_before = metric(&api, "stammtisch_state_cache_hits_total");
        let misses_before = metric(&api, "stammtisch_state_cache_misses_total");
        let mut view = serde_json::Value::Null;
        for _ in 0..3 {
            view = play_turn(&api, &game, &[&host, &guest]);
        }
        // Ten cards dealt each, three played.
        assert_eq!(cards(&view["you"]["hand"]).len(), 7, "{view}");
        let hits = metric(&api, "stammtisch_state_cache_hits_total") - hits_before;
        let misses = metric(&api, "stammtisch_state_cache_misses_total") - misses_before;
        let entries = metric(&api, "stammtisch_state_cache_entries");
        let bytes = metric(&api, "stammtisch_state_cache_bytes");
        if expect_hits {
            // Every view and command of the three turns loads the game.
            assert!(hits >= 12, "{hits} hits");
            assert_eq!(misses, 0, "the game was cached from its creation on");
            assert!(
                entries >= 1 && bytes > 0,
                "{entries} entries, {bytes} bytes"
            );
        } else {
            assert_eq!((hits, misses, entries, bytes), (0, 0, 0, 0));
        }
    }
}

both!(the_cache_serves_loads_and_a_server_without_it_replays);
