// Tournaments in the web client (issue 29): a Swiss 6 nimmt! tournament of two rounds at
// tables of three, made from the create form by the browser's person (who joins it), joined
// by a second person driven through the API, started by the host; the browser's person follows
// "Your next table", plays each game to its end by keyboard and comes back through "Back to
// the tournament"; bots fill the tables. At the end the page's standings equal
// `GET /v1/tournaments/{id}/standings`. The list, the tournament page and the standings are
// checked with axe-core at 375 and 1280 px; screenshots are target/e2e/t0-*.png to t3-*.png.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { apiClient, assertAccessible, assertLabelled, DESKTOP, launch, person, PHONE, shoot, signInAsGuest, startServer, until } from "./harness.mjs";

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** A second person, driven through the API (with the calls the harness's client lacks). */
async function other(name) {
  const c = apiClient(server.base);
  const g = await c.guest(name);
  const call = async (method, path, body) => {
    const res = await fetch(server.base + path, {
      method,
      headers: { "content-type": "application/json", authorization: `Bearer ${g.access_token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  return { ...c, account: g.account, call };
}

/** The moves a player makes (not resigning, leaving or the clock's commands). */
const PLAY = new Set(["play_card", "take_row", "keep_card", "take", "pass", "draft_card"]);

/** Makes the API person's move at `game` if one is asked; true when it made one. */
async function apiMove(c, game) {
  const v = await c.view(game);
  if (v.status !== "active") return false;
  const move = (v.legal ?? []).find((m) => PLAY.has(m.type));
  if (!move) return false;
  await c.command(game, move).catch(() => undefined);
  return true;
}

/** Puts the focus on `sel` by pressing Tab (at most `max` times): it is keyboard reachable. */
async function tabTo(p, sel, max = 120) {
  for (let i = 0; i < max; i++) {
    await p.keyboard.press("Tab");
    if (await p.evaluate((s) => document.activeElement?.matches(s) ?? false, sel)) return;
  }
  throw new Error(`${sel} was not reached by Tab`);
}

/** Makes the browser person's move by keyboard if the table asks one: focus, then Enter. */
async function keyMove(p) {
  const press = async (sel) => {
    const el = p.locator(sel).first();
    if ((await el.count()) === 0 || !(await el.isEnabled().catch(() => false))) return false;
    await el.focus({ timeout: 2000 }).catch(() => undefined);
    await p.keyboard.press("Enter");
    return true;
  };
  if (await press("button.take-row:enabled")) return true;
  const yourTurn = (await p.locator(".status[data-your-turn=true]").count()) > 0;
  const chosen = (await p.locator(".hand-cards button[aria-pressed=true]").count()) > 0;
  if (yourTurn && !chosen) return press(".hand-cards button:enabled");
  return false;
}

test("a Swiss tournament with bots, played from the browser to its standings", async () => {
  const me = await person(browser, { viewport: DESKTOP });
  const p = me.page;
  await p.goto(server.base + "/");
  await signInAsGuest(p, "tina");

  // The list, reached from the header by keyboard.
  await p.locator('header nav a[href="#/tournaments"]').focus();
  await p.keyboard.press("Enter");
  await p.locator("h1", { hasText: "Tournaments" }).waitFor();
  await p.locator(".tournament-list, .empty").first().waitFor();
  await shoot(p, "t0-tournaments-empty");
  for (const size of [PHONE, DESKTOP]) {
    await p.setViewportSize(size);
    await assertLabelled(p);
  }

  // The create form, by keyboard: 6 nimmt!, Swiss, 2 rounds, tables of 3, one round per game.
  await tabTo(p, "[data-new-tournament]");
  await p.keyboard.press("Enter");
  await p.locator("#t-name").waitFor();
  await p.locator("#t-name").focus();
  await p.keyboard.type("Friday Cup");
  await p.locator("#t-ruleset").selectOption("6-nimmt");
  await p.locator("#t-format").selectOption("swiss");
  await p.locator("#t-rounds").fill("2");
  await p.locator("#t-table-size").fill("3");
  await p.locator("#t-end").selectOption("1");
  await p.locator("#t-tc").selectOption("live-10-5");
  await p.locator("#t-max").fill("4");
  await assertLabelled(p);
  await shoot(p, "t1-tournament-new");
  await p.locator("[data-create-tournament]").focus();
  await p.keyboard.press("Enter");
  await p.locator(".tournament[data-status=open]").waitFor();
  const id = decodeURIComponent(new URL(p.url()).hash.split("/")[2].split("?")[0]);
  await p.locator('[data-player="tina"]').waitFor();

  // Bob joins through the API; the open page shows him within a few seconds (it polls).
  const bob = await other("bob");
  await bob.call("POST", `/v1/tournaments/${id}/join`, {});
  await p.locator('[data-player="bob"]').waitFor({ timeout: 15_000 });
  for (const size of [PHONE, DESKTOP]) {
    await p.setViewportSize(size);
    await assertLabelled(p);
  }
  await shoot(p, "t2-tournament-open");

  // The host starts it.
  await tabTo(p, "[data-start]");
  await p.keyboard.press("Enter");
  await p.locator(".tournament[data-status=running]").waitFor({ timeout: 15_000 });

  for (const round of [1, 2]) {
    // Your next table: prominent, followed by keyboard.
    const next = p.locator("[data-next-table]");
    await next.waitFor({ timeout: 30_000 });
    const game = await next.getAttribute("data-next-table");
    await next.focus();
    await p.keyboard.press("Enter");
    await p.locator(`.game[data-status]`).waitFor();
    assert.equal(await p.locator(`[data-tournament-link="${id}"]`).count(), 1, "the table links to its tournament");
    // Bob's table (the same one: two people at tables of three) is played through the API.
    const tour = await bob.call("GET", `/v1/tournaments/${id}`);
    const bobGame = tour.your_next_table?.game ?? null;
    await until(
      async () => {
        if (bobGame) await apiMove(bob, bobGame);
        await keyMove(p);
        return (await p.locator(".game[data-status=finished]").count()) > 0;
      },
      90_000,
      `round ${round}'s game ${game} to end`,
    );
    // Back to the tournament.
    const back = p.locator("[data-back-to-tournament]");
    await back.waitFor();
    await back.focus();
    await p.keyboard.press("Enter");
    await p.locator(`.tournament[data-status]`).waitFor();
    await p.locator(`[data-round="${round}"][data-round-status=finished]`).waitFor({ timeout: 30_000 });
  }

  // The end: the standings after round 2 equal the API's.
  await p.locator(".tournament[data-status=finished]").waitFor({ timeout: 30_000 });
  await p.locator('.standings-table[data-after-round="2"]').waitFor({ timeout: 15_000 });
  const api = await bob.call("GET", `/v1/tournaments/${id}/standings`);
  assert.equal(api.after_round, 2);
  const shown = await p.locator(".standings-table tbody tr").evaluateAll((rows) =>
    rows.map((r) => ({
      account: r.getAttribute("data-account"),
      rank: Number(r.querySelector("[data-rank]").textContent),
      name: r.querySelector("[data-name]").textContent.trim(),
      points: r.querySelector("[data-points]").textContent.trim(),
      total: Number(r.querySelector("[data-total]").textContent),
    })),
  );
  const fmt = (n) => new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 }).format(n);
  assert.deepEqual(
    shown,
    api.rows.map((r) => ({ account: r.account, rank: r.rank, name: r.name, points: fmt(r.points), total: r.total })),
  );
  assert.deepEqual(shown.map((r) => r.name).sort(), ["bob", "tina"]);
  // After round 1, as the selector shows it.
  await p.locator("#t-after").selectOption("1");
  await p.locator('.standings-table[data-after-round="1"]').waitFor();
  const api1 = await bob.call("GET", `/v1/tournaments/${id}/standings?after_round=1`);
  const ranks1 = await p.locator(".standings-table tbody [data-rank]").allTextContents();
  assert.deepEqual(ranks1.map(Number), api1.rows.map((r) => r.rank));
  for (const size of [PHONE, DESKTOP]) {
    await p.setViewportSize(size);
    await assertAccessible(p, `the standings (${size.width} px)`);
  }
  await shoot(p, "t3-tournament-standings");
  // In German: the standings' heading and the rounds follow the switch.
  await p.locator("#lang").selectOption("de");
  await p.locator("#standings-h", { hasText: "Tabelle" }).waitFor();
  await p.locator("h2", { hasText: "Runde 2 · beendet" }).waitFor();
  await p.locator("#lang").selectOption("en");

  // The list's "Finished" and "Mine" show it.
  await p.goto(server.base + "/#/tournaments");
  await p.locator('[data-filter="finished"]').click();
  await p.locator(`[data-tournament="${id}"]`).waitFor();
  await p.locator('[data-filter="mine"]').click();
  await p.locator(`[data-tournament="${id}"]`).waitFor();
  for (const size of [PHONE, DESKTOP]) {
    await p.setViewportSize(size);
    await assertAccessible(p, `the list (${size.width} px)`);
  }
  me.assertClean();
  await me.context.close();
});
