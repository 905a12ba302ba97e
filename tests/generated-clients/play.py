"""Plays one game of every ruleset (and of every 6-nimmt preset) to the end through the
Python client that openapi-python-client generated from openapi/openapi.json, against the
real server, and checks that what the client hands back is typed: the game view and its
`legal` commands, every event of `GET /v1/games/{id}/events` (a generated model for its
event type, with a generated model as `data`), and problems (an illegal command answers a
`Problem` with status 422; the command limit's 429 a `Problem` too).

    python play.py --client target/generated-clients/python \
        --base http://127.0.0.1:PORT --limited-base http://127.0.0.1:PORT2 --command-limit 5

`--limited-base` is a second server started with LIMIT_COMMANDS_PER_MINUTE=--command-limit
(the games run on `--base`, where every limit is off). Every request goes through the
generated client; the only thing read past its models is the raw body that the same client
call returns (`Response.content`), to compare the event pages' keys with what was parsed.
Exits non-zero with a message on the first failure. scripts/test-generated-clients runs it.
"""

from __future__ import annotations

import argparse
import enum
import json
import random
import sys
import time
import traceback
from collections import Counter
from http import HTTPStatus
from typing import Any

MAX_COMMANDS = 2000  # per game; the games here take 7 to about 110 of ours
WAIT_FOR_TURN_S = 10.0  # how long a game may show nothing for us to do before we give up
EVENT_PAGE = 100  # events per page, so that a game needs several pages


class Failure(Exception):
    """A check that did not hold."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Failure(message)


def main() -> int:
    args = parse_args()
    sys.path.insert(0, args.client)
    try:
        play(args)
    except Failure as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        return 1
    except Exception:  # the generated client refused an answer: say so, with where
        traceback.print_exc()
        print("FAILED: the generated client raised (above)", file=sys.stderr)
        return 1
    print("generated Python client: every game finished, events and problems typed")
    return 0


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--client", required=True, help="folder that holds the generated package")
    p.add_argument("--base", required=True, help="server with every limit off")
    p.add_argument("--limited-base", required=True, help="server with a small command limit")
    p.add_argument("--command-limit", type=int, required=True, help="its LIMIT_COMMANDS_PER_MINUTE")
    p.add_argument("--seed", type=int, default=24)
    return p.parse_args()


def play(args: argparse.Namespace) -> None:
    # Imported here: the package is generated into --client at test time.
    from stammtisch_client import AuthenticatedClient, Client
    from stammtisch_client.api.rulesets import list_rulesets

    rng = random.Random(args.seed)
    anonymous = Client(base_url=args.base, raise_on_unexpected_status=True)
    rulesets = list_rulesets.sync(client=anonymous)
    check(type(rulesets).__name__ == "RulesetList", f"GET /v1/rulesets gave {rulesets!r}")
    names = [info.name for info in rulesets.items]
    print(f"rulesets: {', '.join(names)}")
    check(len(names) >= 4, f"expected at least the four rulesets, got {names}")

    # One game per ruleset, and one per preset of 6-nimmt (a preset is a set of options).
    games: list[tuple[str, str | None]] = [(name, None) for name in names]
    for info in rulesets.items:
        if info.name == "6-nimmt":
            games += [(info.name, preset) for preset in sorted(info.presets.to_dict())]

    for number, (ruleset, preset) in enumerate(games):
        label = ruleset + (f" ({preset})" if preset else "")
        token = new_guest(anonymous, f"py_player_{number}")
        client = AuthenticatedClient(base_url=args.base, token=token, raise_on_unexpected_status=True)
        started = time.monotonic()
        game = create_game(client, ruleset, preset, rulesets)
        game = fill_and_start(client, game)
        illegal_code = send_illegal_command(client, game)
        game, commands = play_to_end(client, game, rng)
        events = read_events(client, game.id)
        kinds = Counter(type_name(item) for item in events)
        print(
            f"{label}: {game.players} seats, finished after {commands} commands, "
            f"{len(events)} typed events ({len(kinds)} event types), winners {game.winners}, "
            f"illegal command -> 422 {illegal_code}, {time.monotonic() - started:.1f} s"
        )

    rate_limited(args)


# --- the calls -------------------------------------------------------------------------


def new_guest(anonymous: Any, name: str) -> str:
    from stammtisch_client.api.identity import create_guest
    from stammtisch_client.models import NewGuest

    answer = create_guest.sync(client=anonymous, body=NewGuest(name=name))
    check(hasattr(answer, "access_token"), f"POST /v1/guests gave {answer!r}")
    return answer.access_token


def create_game(client: Any, ruleset: str, preset: str | None, rulesets: Any) -> Any:
    from stammtisch_client.api.games import create_game as create
    from stammtisch_client.models import CreateGame

    info = next(i for i in rulesets.items if i.name == ruleset)
    bounds = info.players.to_dict()
    players = max(bounds["min"], min(bounds["max"], 4))
    body: dict[str, Any] = {"ruleset": ruleset, "players": players}
    if preset:
        body["preset"] = preset
    if ruleset == "11-nimmt":
        # One game with clocks, so their events and the view's clocks go through the
        # generated models too (live: no pause commands among the legal ones).
        body["time_control"] = {"kind": "live", "initial_seconds": 7200, "increment_seconds": 5}
    answer = create.sync_detailed(client=client, body=CreateGame.from_dict(body))
    check(answer.status_code == 201, f"create {body}: {answer.status_code} {answer.parsed!r}")
    game = answer.parsed
    check(type(game).__name__ == "GameBody", f"create {body} gave {game!r}")
    check(str(game.status) == "lobby", f"a new game is in the lobby, not {game.status}")
    return game


def command(client: Any, game_id: str, body: Any) -> Any:
    """Sends one command; gives the client's Response (parsed: the new view or a Problem)."""
    from stammtisch_client.api.games import post_command

    return post_command.sync_detailed(game_id, client=client, body=body)


def fill_and_start(client: Any, game: Any) -> Any:
    from stammtisch_client.models import AddBotCommand, StartCommand

    for _ in range(game.players - 1):
        answer = command(client, game.id, AddBotCommand.from_dict({"type": "add_bot", "strategy": "random"}))
        check(answer.status_code == 200, f"add_bot: {answer.status_code} {answer.parsed!r}")
    answer = command(client, game.id, StartCommand.from_dict({"type": "start"}))
    check(answer.status_code == 200, f"start: {answer.status_code} {answer.parsed!r}")
    game = answer.parsed
    check(str(game.status) == "active", f"a started game is active, not {game.status}")
    return game


def get_game(client: Any, game_id: str) -> Any:
    from stammtisch_client.api.games import get_game as get

    answer = get.sync_detailed(game_id, client=client)
    check(answer.status_code == 200, f"GET the game: {answer.status_code} {answer.parsed!r}")
    return answer.parsed


def send_illegal_command(client: Any, game: Any) -> str:
    """A card not in the hand where a card may be played, else `take_row` where it is not
    legal: a Problem with status 422, and the game does not move."""
    from stammtisch_client.models import PlayCardCommand, Problem, TakeRowCommand

    game = wait_for_turn(client, game)
    legal_types = {str(c.type_) for c in game.legal}
    if "play_card" in legal_types:
        hand = set(game.you.hand)
        body = PlayCardCommand.from_dict({"type": "play_card", "card": next(c for c in range(1, 200) if c not in hand)})
    else:
        check("take_row" not in legal_types, f"take_row is legal at the start: {legal_types}")
        body = TakeRowCommand.from_dict({"type": "take_row", "row": 0})
    answer = command(client, game.id, body)
    problem = answer.parsed
    check(answer.status_code == 422, f"illegal {body.to_dict()}: status {answer.status_code}, not 422")
    check(isinstance(problem, Problem), f"illegal {body.to_dict()}: parsed as {type(problem)}, not Problem")
    check(problem.status == 422, f"the Problem says status {problem.status}")
    check(bool(problem.code) and bool(problem.title) and bool(problem.type_), f"an incomplete Problem: {problem!r}")
    check_title(problem)
    check(get_game(client, game.id).version == game.version, "an illegal command changed the game")
    return f"{problem.code} ({problem.title!r})"


def check_title(problem: Any) -> None:
    """RFC 9457: the title summarises the problem type, it is not the status's reason phrase."""
    phrase = HTTPStatus(problem.status).phrase
    check(problem.title != phrase, f"the Problem's title is the reason phrase {phrase!r}: {problem!r}")


def wait_for_turn(client: Any, game: Any) -> Any:
    """The game as soon as it is finished or we may send something."""
    deadline = time.monotonic() + WAIT_FOR_TURN_S
    while str(game.status) != "finished" and not playable(game.legal):
        check(
            time.monotonic() < deadline,
            f"game {game.id}: nothing to do for {WAIT_FOR_TURN_S} s; awaiting {game.awaiting}",
        )
        time.sleep(0.05)
        game = get_game(client, game.id)
    return game


def playable(legal: list[Any]) -> list[Any]:
    # `resign` and `leave` would hand the seat to a bot: the game is to be played by us.
    return [c for c in legal if str(c.type_) not in ("resign", "leave")]


def play_to_end(client: Any, game: Any, rng: random.Random) -> tuple[Any, int]:
    from stammtisch_client.models import GameBody

    sent = 0
    game = get_game(client, game.id)
    while True:
        game = wait_for_turn(client, game)
        if str(game.status) == "finished":
            check(isinstance(game.winners, list) and game.winners, f"a finished game without winners: {game.winners!r}")
            return game, sent
        check(sent < MAX_COMMANDS, f"game {game.id} ({game.ruleset}) not finished after {MAX_COMMANDS} commands")
        for legal in game.legal:
            check(
                is_model(legal) and isinstance(legal.type_, enum.Enum),
                f"a legal command parsed as {legal!r}, not a generated command model",
            )
        choice = rng.choice(playable(game.legal))
        answer = command(client, game.id, choice)
        sent += 1
        check(answer.status_code == 200, f"legal {choice.to_dict()}: {answer.status_code} {answer.parsed!r}")
        check(isinstance(answer.parsed, GameBody), f"legal {choice.to_dict()}: parsed as {type(answer.parsed)}")
        game = answer.parsed


# --- events ----------------------------------------------------------------------------


def read_events(client: Any, game_id: str) -> list[Any]:
    """Every event the caller may see, page by page, each checked to be typed."""
    from stammtisch_client.api.games import list_events

    items: list[Any] = []
    after: int | None = None
    for _ in range(1000):
        answer = list_events.sync_detailed(game_id, client=client, after=after, limit=EVENT_PAGE)
        check(answer.status_code == 200, f"events after {after}: {answer.status_code} {answer.parsed!r}")
        page = answer.parsed
        check(hasattr(page, "items"), f"the event page parsed as {type(page).__name__}, not a page: {page!r}")
        raw = json.loads(answer.content)["items"]
        check(len(page.items) == len(raw), f"{len(raw)} events sent, {len(page.items)} parsed")
        for item, raw_item in zip(page.items, raw, strict=True):
            check_typed_event(item, raw_item)
            # Other seats' private events are left out: seq rises, with gaps.
            check(
                not items or item.seq > items[-1].seq, f"event seq {item.seq} after {items[-1].seq if items else None}"
            )
            items.append(item)
        cursor = page.next_cursor
        if not cursor:
            check(len(raw) < EVENT_PAGE or not raw, "the last page was full but had no next_cursor")
            break
        # `next_cursor` is a string; `after` takes an integer (the last seq).
        after = int(cursor)
    else:
        raise Failure("more than 1000 event pages")
    check(len(items) > 0, "a finished game without events")
    return items


def is_model(value: Any) -> bool:
    """An instance of a class that the generator made (not a dict, list, str or Unset)."""
    return type(value).__module__.startswith("stammtisch_client.models.") and hasattr(value, "to_dict")


def type_name(item: Any) -> str:
    return str(item.type_)


def check_typed_event(item: Any, raw: dict[str, Any]) -> None:
    """The event is a generated model for its own event type, with `seq`, `at`, its `type`
    as a one-value enum (so the class stands for this event type alone) and `data` a
    generated model whose fields are what the server sent, none of them untyped extras."""
    from datetime import datetime

    from stammtisch_client.types import Unset

    where = f"event {raw.get('seq')} ({raw.get('type')})"
    check(is_model(item), f"{where} parsed as {type(item).__module__}.{type(item).__name__}, not a generated model")
    check(isinstance(getattr(item, "seq", None), int), f"{where}: no integer seq on {type(item).__name__}")
    check(
        isinstance(getattr(item, "at", None), datetime),
        f"{where}: `at` is {getattr(item, 'at', None)!r}, not a datetime",
    )
    kind = getattr(item, "type_", None)
    check(isinstance(kind, enum.Enum), f"{where}: `type` is {kind!r} on {type(item).__name__}, not an enum")
    check(len(type(kind)) == 1, f"{where}: {type(item).__name__}.type takes {len(type(kind))} values, not one")
    check(kind.value == raw["type"], f"{where}: parsed as a {kind.value} event")
    check(item.seq == raw["seq"], f"{where}: parsed seq {item.seq}")
    extra = getattr(item, "additional_properties", {})
    check(not extra, f"{where}: untyped fields {sorted(extra)} on {type(item).__name__}")
    data = getattr(item, "data", None)
    check(
        not isinstance(data, (dict, Unset)) and is_model(data),
        f"{where}: data is {type(data).__name__}, not a generated model",
    )
    extra = getattr(data, "additional_properties", {})
    check(not extra, f"{where}: untyped data fields {sorted(extra)} on {type(data).__name__}")
    sent, parsed = set(raw["data"]), set(data.to_dict())
    check(sent == parsed, f"{where}: data keys sent {sorted(sent)}, parsed {sorted(parsed)}")


# --- the command limit -----------------------------------------------------------------


def rate_limited(args: argparse.Namespace) -> None:
    """On the server with LIMIT_COMMANDS_PER_MINUTE=N a fresh account's first N commands
    pass and the next is a 429 that the client parses as a Problem."""
    from stammtisch_client import AuthenticatedClient, Client
    from stammtisch_client.api.games import create_game as create
    from stammtisch_client.models import AddBotCommand, CreateGame, Problem

    limit = args.command_limit
    check(limit >= 1, "--command-limit must be at least 1")
    anonymous = Client(base_url=args.limited_base, raise_on_unexpected_status=True)
    token = new_guest(anonymous, "py_limited")
    client = AuthenticatedClient(base_url=args.limited_base, token=token, raise_on_unexpected_status=True)
    answer = create.sync_detailed(
        client=client, body=CreateGame.from_dict({"ruleset": "6-nimmt", "players": limit + 2})
    )
    check(answer.status_code == 201, f"create on the limited server: {answer.status_code} {answer.parsed!r}")
    game_id = answer.parsed.id
    bot = AddBotCommand.from_dict({"type": "add_bot"})
    for n in range(1, limit + 1):
        answer = command(client, game_id, bot)
        check(answer.status_code == 200, f"command {n} of {limit} allowed: {answer.status_code} {answer.parsed!r}")
    answer = command(client, game_id, bot)
    problem = answer.parsed
    check(answer.status_code == 429, f"command {limit + 1} with a limit of {limit}: {answer.status_code}, not 429")
    check(isinstance(problem, Problem), f"the 429 parsed as {type(problem)}, not Problem")
    check(problem.status == 429 and bool(problem.code), f"the 429's Problem: {problem!r}")
    check_title(problem)
    check("retry-after" in answer.headers, f"the 429 has no Retry-After: {dict(answer.headers)}")
    print(
        f"command limit {limit}: command {limit + 1} -> 429 {problem.code} ({problem.title!r}, "
        f"Retry-After {answer.headers['retry-after']} s), parsed as Problem"
    )


if __name__ == "__main__":
    sys.exit(main())
