// The web client end to end, in Debian's Chromium against the real server binary: people
// play through the UI as a player would, and every page must stay free of console errors
// and failed requests (except where a test provokes one on purpose and says which).
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  apiClient,
  assertAccessible,
  assertLabelled,
  freePort,
  DESKTOP,
  isFinished,
  launch,
  moveIfAsked,
  person,
  PHONE,
  shoot,
  signInAsGuest,
  startServer,
  startSmtpSink,
  startStaticServer,
  until,
} from "./harness.mjs";

let server;
let browser;
let allowedSite;
let otherSite;

before(async () => {
  allowedSite = await startStaticServer();
  otherSite = await startStaticServer();
  server = await startServer({ corsOrigins: allowedSite.origin });
  allowedSite.setApi(server.base);
  otherSite.setApi(server.base);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await allowedSite?.stop();
  await otherSite?.stop();
});

/** Opens the new-game form's "More options" (closed at first). */
async function openMoreOptions(page) {
  const more = page.locator("form.create details.more-options");
  if ((await more.getAttribute("open")) === null) await more.locator("summary").click();
  await page.locator("#c-name").waitFor();
}

/** Creates a game through the lobby's form (`setup` sets "More options"); returns its id. */
async function createGame(page, { ruleset, players, setup }) {
  await page.locator("#c-ruleset").selectOption(ruleset);
  await page.locator("#c-players").fill(String(players));
  if (setup) {
    await openMoreOptions(page);
    await setup(page);
  }
  await page.locator("form.create button[type=submit]").click();
  await page.waitForURL(/#\/games\//);
  await page.locator(".game-lobby").waitFor();
  return decodeURIComponent(page.url().split("#/games/")[1]);
}

/**
 * A guest `name` at the new-game form (6 nimmt!, 3 players, "More options" open);
 * `before(page)` runs before the page is loaded (to route its requests).
 */
async function newGameForm(name, before = async () => {}) {
  const me = await person(browser, { viewport: DESKTOP });
  const p = me.page;
  await before(p);
  await p.goto(server.base + "/");
  await signInAsGuest(p, name);
  await p.locator("#c-ruleset").selectOption("6-nimmt");
  await p.locator("#c-players").fill("3");
  await openMoreOptions(p);
  return { me, p };
}

/**
 * The new-game form of `newGameForm`, whose `GET /v1/rulesets` is held back until
 * `release()`: the form is usable before it answers.
 */
async function formWithRulesetsHeld(name) {
  let release;
  const held = new Promise((r) => (release = r));
  const { me, p } = await newGameForm(name, (page) =>
    page.route(/\/v1\/rulesets(\?|$)/, async (route) => {
      await held;
      await route.continue();
    }),
  );
  return { me, p, release };
}

/** Creates the game the form shows; returns its invite preview (`GET /v1/invites/{code}`). */
async function createAndPreview(p) {
  await p.locator("form.create button[type=submit]").click();
  await p.waitForURL(/#\/games\//);
  await p.locator(".game-lobby").waitFor();
  const code = await p.locator("[data-invite-code]").textContent();
  return p.evaluate(async (c) => (await fetch(`/v1/invites/${c}`)).json(), code.trim());
}

async function addBot(page, strategy) {
  const seats = await page.locator(".seats-list .seat-name:not(:has(em))").count();
  await page.locator("#bot-strategy").selectOption(strategy);
  await page.locator(".add-bot button").click();
  await until(async () => (await page.locator(".seats-list .seat-name:not(:has(em))").count()) > seats, 10_000, "the bot");
}

/** Plays every page's moves until all of them show the finished game. */
async function playToTheEnd(pages, { ms = 240_000, nos } = {}) {
  const end = Date.now() + ms;
  for (;;) {
    let done = true;
    for (const p of pages) {
      if (!(await isFinished(p))) {
        done = false;
        await moveIfAsked(p, { nos });
      }
    }
    if (done) return;
    if (Date.now() > end) throw new Error("the game did not finish in time");
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Registers an account through the sign-in page's form (and is signed in). */
async function register(page, name) {
  await page.locator(".toggle button").nth(1).click();
  await page.locator("#acc-name").fill(name);
  await page.locator("#acc-pw").fill(`${name}-secret-pw`);
  await page.locator("form:has(#acc-name) button[type=submit]").click();
  await page.locator("[data-account]").waitFor();
}

/** Logs in through the sign-in page's form with a name and password. */
async function logIn(page, name, password) {
  await page.locator(".toggle button").nth(0).click();
  await page.locator("#acc-name").fill(name);
  await page.locator("#acc-pw").fill(password);
  await page.locator("form:has(#acc-name) button[type=submit]").click();
}

/** Opens the account page from the header. */
async function openAccount(page) {
  await page.locator("header nav a[href='#/account']").click();
  await page.locator(".account-page h1").waitFor();
}

/** Runs the fairness check on a finished game's page and expects every check to pass. */
async function verifyFairness(page) {
  await page.locator(".fairness button").click();
  await page.locator("[data-verified]").waitFor();
  assert.equal(await page.locator("[data-verified]").getAttribute("data-verified"), "true", "every fairness check passes");
  assert.ok((await page.locator(".checks li.ok").count()) >= 2, "the commitment and at least one deal were checked");
  assert.equal(await page.locator(".checks li.bad").count(), 0);
}

describe("the web client", () => {
  test("two people play 6 nimmt! to the end, each seeing the other's moves live", async () => {
    const anna = await person(browser, { viewport: PHONE, locale: "en-US" });
    const bruno = await person(browser, { viewport: DESKTOP, locale: "de-DE" });
    const a = anna.page;
    const b = bruno.page;
    await a.goto(server.base + "/");
    await shoot(a, "01-sign-in");
    await assertLabelled(a);
    // A name is suggested, so a guest can start with one click.
    assert.match(await a.locator("#guest-name").inputValue(), /^Guest-\d{4}$/);
    await signInAsGuest(a, "anna");
    await shoot(a, "02-lobby");
    await assertLabelled(a);
    const id = await createGame(a, {
      ruleset: "6-nimmt",
      players: 2,
      setup: async (p) => {
        await p.locator("input[name=end]").nth(1).check();
        await p.locator("#c-rounds").fill("1");
      },
    });
    const link = await a.locator("#invite-link").inputValue();
    assert.match(link, /#\/join\/[^/]+\/[A-Z0-9]+$/);
    await shoot(a, "03-game-lobby");

    // Bruno opens the invite link, signs in as a guest and is seated; his browser speaks German.
    await b.goto(link);
    await b.locator("#guest-name").waitFor();
    assert.equal(await b.locator("html").getAttribute("lang"), "de");
    assert.match(await b.locator("#guest-name").inputValue(), /^Gast-\d{4}$/);
    await signInAsGuest(b, "bruno");
    await b.waitForURL(new RegExp(`#/games/${id}$`));
    await b.locator(".game-lobby").waitFor();
    // Anna sees him sit down without reloading.
    await a.locator(".seats-list [data-seat='1'] .seat-name", { hasText: "bruno" }).waitFor();
    await a.locator(".lobby-actions button.primary").click();

    // Both tables are live: Bruno's page turns into the table by itself.
    await b.locator(".hand-cards button").first().waitFor();
    await a.locator("[data-connection=live]").waitFor();
    await b.locator("[data-connection=live]").waitFor();
    assert.equal(await b.locator("#hand-h").textContent(), "Deine Hand");
    // The tab says it is his turn, to be seen from another tab.
    assert.match(await b.title(), /^▶ Du bist dran · 6 nimmt! · Runde 1 – Stammtisch$/);
    await shoot(b, "04-table-6-nimmt");
    await assertLabelled(b);

    // Anna chooses a card; Bruno sees her "has chosen" mark live, but not the card.
    const first = await a.locator(".hand-cards button").first().getAttribute("data-card");
    await a.locator(".hand-cards button").first().click();
    await a.locator(".hand-cards button[aria-pressed=true]").waitFor();
    await b.locator(".seat[data-seat='0'] [data-selected=true]").waitFor();
    assert.equal(await b.locator(`.revealed`).count(), 0, "no card is revealed before everyone chose");
    // She changes her mind: the selection moves, the game waits for Bruno.
    await a.locator(".hand-cards button").nth(1).click();
    await until(async () => (await a.locator(".hand-cards button[aria-pressed=true]").getAttribute("data-card")) !== first, 10_000, "the changed selection");
    await shoot(a, "05-selected");
    // Bruno chooses: the reveal and the placements reach both pages step by step.
    await b.locator(".hand-cards button").first().click();
    await a.locator(".log-list li", { hasText: "Cards revealed" }).waitFor();
    await b.locator(".log-list li", { hasText: "Aufgedeckt" }).waitFor();

    await playToTheEnd([a, b]);
    for (const p of [a, b]) {
      await p.locator(".status.finished").waitFor();
      assert.equal(await p.locator(".scores tbody tr").count(), 1, "one round was played");
    }
    await a.locator(".status.finished .winners").waitFor();
    // The round's result stays at the end: what each took, the round's bullheads, the totals.
    await a.locator(".round-summary h2", { hasText: "Round 1 is over" }).waitFor();
    await b.locator(".round-summary h2", { hasText: "Runde 1 ist vorbei" }).waitFor();
    assert.equal(await a.locator(".round-summary tbody tr").count(), 2);
    const summaryTotals = await a.locator(".round-summary tbody td strong").allTextContents();
    const tableTotals = await a.locator(".scores tfoot td strong").allTextContents();
    assert.deepEqual(summaryTotals, tableTotals, "the summary's totals are the game's");
    await shoot(a, "06-round-summary");
    // Closed by keyboard.
    await b.locator(".round-summary .dismiss").focus();
    await b.keyboard.press("Enter");
    await until(async () => (await b.locator(".round-summary").count()) === 0, 5_000, "the summary closed");
    await shoot(a, "06-finished");
    await verifyFairness(a);
    await shoot(a, "07-fairness");
    // "New game" leads to the lobby, with the focus on the new-game form.
    await a.locator("[data-end=new-game]").click();
    await a.waitForURL((u) => u.hash === "#/" || u.hash === "");
    await until(() => a.evaluate(() => document.activeElement?.id === "c-ruleset"), 5_000, "the focus on the new-game form");
    anna.assertClean();
    bruno.assertClean();
    await anna.context.close();
    await bruno.context.close();
  });

  test("one person plays Nimm oder schieb against bots to the end", async () => {
    const me = await person(browser, { viewport: PHONE });
    const p = me.page;
    await p.goto(server.base + "/");
    await signInAsGuest(p, "carla");
    await createGame(p, {
      ruleset: "nimm-oder-schieb",
      players: 3,
      setup: async (q) => {
        await q.locator("#c-chips").selectOption("open");
      },
    });
    assert.match(await p.locator(".game-lobby .options").textContent(), /Open \(everyone sees all\) · Match of 1 game$/);
    await addBot(p, "random");
    await addBot(p, "heuristic");
    await p.locator(".lobby-actions button.primary").click();
    await p.locator(".open-card .card.nos").waitFor();
    const chips = Number(await p.locator(".my-chips").getAttribute("data-chips"));
    assert.equal(chips, 11, "three players start with 11 chips");
    await assertLabelled(p);
    // Pass once, by keyboard: a chip goes onto the card.
    const pass = p.getByRole("button", { name: "Pass (pay 1 chip)" });
    await until(() => pass.isEnabled(), 10_000, "the pass button");
    await pass.focus();
    await p.keyboard.press("Enter");
    await until(async () => Number(await p.locator(".my-chips").getAttribute("data-chips")) !== 11 || (await isFinished(p)), 10_000, "the chip paid");
    await shoot(p, "10-nimm-oder-schieb");
    await playToTheEnd([p], { nos: "random" });
    await p.locator(".removed .card.nos").first().waitFor();
    assert.equal(await p.locator(".removed .card.nos").count(), 9, "the nine removed cards are shown");
    await shoot(p, "11-nimm-oder-schieb-finished");
    await verifyFairness(p);
    me.assertClean();
    await me.context.close();
  });

  test("Nimm oder schieb cards lead with their value, a seat's runs are framed, and the log follows a language switch", async () => {
    const me = await person(browser, { viewport: DESKTOP });
    const p = me.page;
    await p.goto(server.base + "/");
    await signInAsGuest(p, "yvonne");
    // A prepared pile: 33, 34 and 35 come first, and seat 0 acts first in game 1; whoever
    // takes a card acts first on the next, so taking three times makes the run 33–35.
    const pile = [33, 34, 35, ...Array.from({ length: 21 }, (_, i) => 3 + i)];
    await createGame(p, {
      ruleset: "nimm-oder-schieb",
      players: 3,
      setup: async (q) => {
        await q.locator("#c-deal-json").fill(JSON.stringify({ draw_pile: pile }));
      },
    });
    await addBot(p, "random");
    await addBot(p, "heuristic");
    await p.locator(".lobby-actions button.primary").click();
    const take = p.locator(".nos-actions button.primary");
    for (const value of [33, 34, 35]) {
      await p.locator(`.open-card .card.nos[data-value='${value}']`).waitFor();
      await until(() => take.isEnabled(), 10_000, `the take button for ${value}`);
      await take.click();
      await p.locator(`.seat[data-seat='0'] .card.nos[data-value='${value}']`).waitFor();
    }
    // The open card's value is its large print; rank and suit are small.
    await p.locator(".open-card .card.nos[data-value='3']").waitFor();
    const sizes = (sel) =>
      p.locator(sel).evaluate((card) => ({
        value: parseFloat(getComputedStyle(card.querySelector(".value")).fontSize),
        rank: parseFloat(getComputedStyle(card.querySelector(".rank")).fontSize),
        text: card.querySelector(".value").textContent,
      }));
    const open = await sizes(".open-card .card.nos");
    assert.equal(open.text, "3");
    assert.ok(open.value >= 2 * open.rank, `the open card's value (${open.value} px) leads its rank (${open.rank} px)`);
    // The seat's cards form one run in one frame, with a caption saying what it counts.
    const run = p.locator(".seat[data-seat='0'] .run.multi");
    assert.equal(await run.count(), 1);
    assert.equal(await run.getAttribute("data-run"), "33-35");
    assert.equal(await run.locator(".card.nos").count(), 3, "a run of three cards");
    assert.equal(await run.locator(".card.nos.set-back").count(), 2, "only the lowest card counts");
    assert.equal(await run.locator(".run-caption").textContent(), "run 33–35: counts 33");
    const taken = await sizes(".seat[data-seat='0'] .run .card.nos[data-value='34']");
    assert.ok(taken.value > taken.rank, `a taken card's value (${taken.value} px) leads its rank (${taken.rank} px)`);
    // A screen reader hears the values and the run in one sentence.
    assert.equal(
      await p.locator(".seat[data-seat='0'] [data-runs-summary]").textContent(),
      "Cards taken, by value: 33 to 35 (a run: counts 33). They count 33.",
    );
    assert.equal(await p.locator(".open-card .card.nos").getAttribute("aria-label"), "3♣ (value 3)");
    await assertLabelled(p);
    await shoot(p, "80-nos-values-and-runs");

    // The log's lines are made from the events when shown: a language switch rewords them.
    const line = p.locator(".log-list li[data-event=card_taken]").first();
    assert.match(await line.textContent(), /^yvonne \(you\) takes 33 \(7♥\) with 0 chips\.$/);
    const revealed = p.locator(".log-list li[data-event=card_revealed]").first();
    assert.match(await revealed.textContent(), /is turned up\.$/);
    await p.locator("#lang").selectOption("de");
    await until(async () => /nimmt 33/.test(await line.textContent()), 5_000, "the old line in German");
    assert.match(await line.textContent(), /^yvonne \(du\) nimmt 33 \(7♥\) mit 0 Chips\.$/);
    assert.match(await revealed.textContent(), /wird aufgedeckt\.$/);
    assert.equal(await p.locator(".log-list li", { hasText: "takes" }).count(), 0, "no English line is left");
    assert.equal(await run.locator(".run-caption").textContent(), "Folge 33–35: zählt 33");
    assert.equal(
      await p.locator(".seat[data-seat='0'] [data-runs-summary]").textContent(),
      "Genommene Karten, nach Wert: 33 bis 35 (eine Folge: zählt 33). Sie zählen 33.",
    );
    await assertLabelled(p);
    await shoot(p, "81-nos-values-and-runs-de");
    await p.locator("#lang").selectOption("en");
    await until(async () => /takes 33/.test(await line.textContent()), 5_000, "the old line in English again");
    me.assertClean();
    await me.context.close();
  });

  test("a score pad refuses an impossible round with a sentence, in English and in German", async () => {
    const me = await person(browser, { viewport: PHONE });
    const p = me.page;
    // The impossible rounds below are refused by the server on purpose.
    me.allow(/status of 422/);
    me.allow(/HTTP 422: POST .*\/rounds$/);
    await p.goto(server.base + "/");
    await signInAsGuest(p, "zora");
    await p.locator("header nav a[href='#/pads']").click();
    await p.locator("#p-ruleset").selectOption("6-nimmt");
    await p.locator("#p-name-0").waitFor();
    for (const [i, n] of ["Anna", "Ben", "Carla"].entries()) await p.locator(`#p-name-${i}`).fill(n);
    await p.locator(".pads form button[type=submit]").click();
    await p.locator(".pad-table").waitFor();
    const enter = async (scores) => {
      for (const [i, s] of scores.entries()) await p.locator(`#pad-score-${i}`).fill(String(s));
      await p.locator(".pad-actions button[type=submit]").click();
    };
    const detail = p.locator(".pad .error .detail");
    await enter([300, 0, 0]);
    await detail.waitFor();
    assert.equal(
      await detail.textContent(),
      "Details: Anna cannot have 300 bullheads in one round: in 6 nimmt! with 3 players, one player gets between 0 and 97 in a round.",
    );
    await assertLabelled(p);
    await shoot(p, "82-pad-impossible-round");
    // The page asks the server in the language chosen on the page, not the browser's.
    await p.locator("#lang").selectOption("de");
    await enter([300, 0, 0]);
    // (The shown error's own words follow the switch at once; its detail comes with the answer.)
    await until(async () => (await detail.textContent()).includes("Hornochsen"), 10_000, "the German sentence");
    assert.equal(
      await detail.textContent(),
      "Einzelheiten: Anna kann in einer Runde nicht 300 Hornochsen haben: In 6 nimmt! mit 3 Spielern bekommt ein Spieler in einer Runde zwischen 0 und 97.",
    );
    assert.match(await p.locator(".pad .error p").first().textContent(), /Diese Runde kann es so nicht geben/);
    await assertLabelled(p);
    await shoot(p, "83-pad-impossible-round-de");
    await p.locator("#lang").selectOption("en");
    me.assertClean();
    await me.context.close();
  });

  test("one click seats a person with bots of the chosen strength and starts; played to the end", async () => {
    const me = await person(browser, { viewport: PHONE });
    const p = me.page;
    await p.goto(server.base + "/");
    await signInAsGuest(p, "quirin");
    await p.locator("#b-ruleset").selectOption("6-nimmt");
    await p.locator("#b-players").selectOption("3");
    await p.locator("#b-strategy").selectOption("expert");
    await p.getByRole("button", { name: "Play against bots" }).click();
    await p.waitForURL(/#\/games\//);
    // No lobby to wait in: the game is under way with two expert bots.
    await p.locator(".hand .card").first().waitFor();
    assert.equal(await p.locator(".game-lobby").count(), 0, "the game started at once");
    await assertLabelled(p);
    await shoot(p, "05-one-click-bots");
    await playToTheEnd([p]);
    await shoot(p, "06-one-click-bots-finished");
    me.assertClean();
    await me.context.close();
  });

  test("every page passes axe-core (no serious or critical violation) at phone and desktop size", async () => {
    const me = await person(browser, { viewport: PHONE });
    const p = me.page;
    await p.goto(server.base + "/");
    for (const [size, viewport] of [["phone", PHONE], ["desktop", DESKTOP]]) {
      await p.setViewportSize(viewport);
      await assertAccessible(p, `the sign-in page (${size})`);
    }
    await signInAsGuest(p, "erna");
    const profile = await p.getByRole("link", { name: "My profile" }).getAttribute("href");
    const pages = ["#/", "#/pads", "#/calculator", "#/leaderboard", profile, "#/account", "#/no-such-page"];
    for (const hash of pages) {
      await p.goto(server.base + "/" + hash);
      await p.locator("main h1").waitFor();
      await p.waitForTimeout(300);
      for (const [size, viewport] of [["phone", PHONE], ["desktop", DESKTOP]]) {
        await p.setViewportSize(viewport);
        await assertAccessible(p, `${hash} (${size})`);
      }
    }
    me.assertClean();
    await me.context.close();
  });

  test("X nimmt!: taking a row and choosing the card for the X row", async () => {
    const me = await person(browser, { viewport: DESKTOP });
    const p = me.page;
    await p.goto(server.base + "/");
    await signInAsGuest(p, "dora");
    // A prepared deal forces a row choice and then a keep decision (see tests/api/rulesets.rs).
    const deal = { rows: [[10], [20], [30]], hands: [[1, 2, 12, 40, 41, 42, 43, 44], [11, 21, 22, 50, 51, 52, 53, 54]] };
    const id = await createGame(p, {
      ruleset: "x-nimmt",
      players: 2,
      setup: async (q) => {
        await q.locator("#c-deals").fill("1");
        await q.locator("#c-deal-json").fill(JSON.stringify(deal));
      },
    });
    assert.equal(await p.locator(".game-lobby .options").textContent(), "1 deal");
    const code = await p.locator("[data-invite-code]").textContent();
    const emil = apiClient(server.base);
    await emil.guest("emil");
    await emil.command(id, { type: "join", invite_code: code });
    await p.locator(".seats-list [data-seat='1'] .seat-name", { hasText: "emil" }).waitFor();
    await p.locator(".lobby-actions button.primary").click();
    await p.locator(".hand-cards button").first().waitFor();

    const play = async (card) => {
      await p.locator(`.hand-cards button[data-card='${card}']`).click();
      await p.locator(`.hand-cards button[data-card='${card}'][aria-pressed=true]`).waitFor();
    };
    // Turn 1: 1 is below every row, so Dora takes a row (row 3, one card: kept automatically).
    await play(1);
    await emil.command(id, { type: "play_card", card: 21 });
    await p.locator("button.take-row").first().waitFor();
    await shoot(p, "20-x-nimmt-take-row");
    await assertLabelled(p);
    // By keyboard: the prompt puts the focus on the cheapest row (all cost 3: the first);
    // two Tabs reach row 3, Enter takes it, and the focus stays on the table.
    // (innerText: what is shown, without the phone's short label, which is hidden here.)
    const focused = () => p.evaluate(() => document.activeElement?.innerText?.trim() ?? "");
    await until(async () => (await focused()) === "Take row 1 (3 bullheads)", 10_000, "the focus on the cheapest row");
    await p.keyboard.press("Tab");
    await p.keyboard.press("Tab");
    assert.equal(await focused(), "Take row 3 (3 bullheads)");
    await p.keyboard.press("Enter");
    await p.locator(".seat[data-seat='0'] .x-row .card").first().waitFor();
    await until(
      () => p.evaluate(() => document.activeElement !== document.body && document.querySelector(".table-main")?.contains(document.activeElement)),
      10_000,
      "the focus kept on the table after the row was taken",
    );
    // Turns 2 and 3: 12 completes row 1 (capacity 3) and takes 10 and 11: Dora must choose.
    await until(async () => (await p.locator(".hand-cards button[data-card='2']:enabled").count()) > 0, 15_000, "turn 2");
    await play(2);
    await emil.command(id, { type: "play_card", card: 11 });
    await until(async () => (await p.locator(".hand-cards button[data-card='12']:enabled").count()) > 0, 15_000, "turn 3");
    await play(12);
    await emil.command(id, { type: "play_card", card: 22 });
    await p.locator("button[data-keep='10']").waitFor();
    await shoot(p, "21-x-nimmt-keep");
    // Keeping 10 (below the X row's 30) puts the X row onto the X stack; 11 goes to the hand.
    await p.locator("button[data-keep='10']").click();
    await until(async () => (await p.locator(".x-stack-own .card").count()) === 1, 15_000, "the X stack");
    assert.match(await p.locator(".seat[data-seat='0'] .x-row").textContent(), /X-?\s?[Rr]ow.*10/s);
    await p.locator(".hand-cards button[data-card='11']").waitFor();

    // Emil plays on through the API; Dora through the page, to the end of the deal.
    let stop = false;
    const emilPlays = (async () => {
      while (!stop) {
        const v = await emil.view(id);
        if (v.status === "finished") return;
        const mine = v.awaiting.some((a) => a.seat === v.you.seat);
        const cmd = v.legal.find((c) => c.type !== "resign");
        if (mine && cmd && !(cmd.type === "play_card" && v.you.selected)) {
          await emil.command(id, cmd).catch(() => undefined);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    await playToTheEnd([p]);
    stop = true;
    await emilPlays;
    await shoot(p, "22-x-nimmt-finished");
    await verifyFairness(p);
    me.assertClean();
    await me.context.close();
  });

  test("an invite link pasted in the lobby seats a signed-in person", async () => {
    const host = await person(browser, { viewport: DESKTOP });
    const guest = await person(browser, { viewport: PHONE });
    await host.page.goto(server.base + "/");
    await signInAsGuest(host.page, "frieda");
    await createGame(host.page, {
      ruleset: "11-nimmt",
      players: 3,
      setup: async (q) => {
        await q.locator("#c-deadline").selectOption("86400");
      },
    });
    const link = await host.page.locator("#invite-link").inputValue();
    await guest.page.goto(server.base + "/");
    await signInAsGuest(guest.page, "gerd");
    await guest.page.locator("#invite").fill(link);
    await guest.page.locator("form:has(#invite) button[type=submit]").click();
    await guest.page.locator(".game-lobby").waitFor();
    await guest.page.locator(".seats-list [data-seat='1'] .seat-name", { hasText: "gerd" }).waitFor();
    await host.page.locator(".seats-list [data-seat='1'] .seat-name", { hasText: "gerd" }).waitFor();
    await addBot(host.page, "heuristic");
    await host.page.locator(".lobby-actions button.primary").click();
    await guest.page.locator(".hand-cards button").first().waitFor();
    // The game waits for Gerd: Frieda's inbox stays empty for it, Gerd's lists it.
    await guest.page.goto(server.base + "/#/");
    await guest.page.locator("section[aria-labelledby=inbox-h] .game-item").first().waitFor();
    // With its deadline: a day per move, so due in about 24 hours.
    assert.match(
      await guest.page.locator("section[aria-labelledby=inbox-h] .game-item .deadline").first().textContent(),
      /\(due in (1 day|23 hr 59 min)\)/,
    );
    await shoot(guest.page, "30-inbox");
    host.assertClean();
    guest.assertClean();
    await host.context.close();
    await guest.context.close();
  });

  test("the new-game form shows the game, players, bots and clock; every other option is under More options", async () => {
    const me = await person(browser, { viewport: PHONE, locale: "en-US" });
    const p = me.page;
    await p.goto(server.base + "/");
    await signInAsGuest(p, "lore");
    const form = p.locator("form.create");
    await form.waitFor();
    const shown = () =>
      form.evaluate((f) =>
        // checkVisibility: what a closed <details> holds keeps its boxes but is not shown.
        [...f.querySelectorAll("input, select, textarea")].filter((el) => el.checkVisibility()).map((el) => el.id || el.type),
      );
    // At first: the game, the number of players, the bots and the clock, nothing else.
    assert.deepEqual(await shown(), ["c-ruleset", "c-players", "c-bots", "c-tc"]);
    const more = form.locator("details.more-options");
    assert.equal(await more.getAttribute("open"), null, "More options starts closed");
    assert.equal((await more.locator("summary").textContent()).trim(), "More options");
    // With bots, their strength.
    await p.locator("#c-players").fill("3");
    assert.deepEqual(
      await p.locator("#c-bots option").allTextContents(),
      ["No bots", "1 bot", "2 bots"],
      "every seat but the host's may be a bot",
    );
    await p.locator("#c-bots").selectOption("2");
    await p.locator("#c-bot-strength").selectOption("expert");
    assert.deepEqual(await shown(), ["c-ruleset", "c-players", "c-bots", "c-bot-strength", "c-tc"]);
    await form.scrollIntoViewIfNeeded();
    await shoot(p, "31-new-game-simple");
    for (const [size, viewport] of [["phone", PHONE], ["desktop", DESKTOP]]) {
      await p.setViewportSize(viewport);
      await assertAccessible(p, `the lobby's simple new-game form (${size})`);
    }
    await assertLabelled(p);

    // By keyboard: the summary is reached and opened like a button.
    await more.locator("summary").focus();
    await p.keyboard.press("Enter");
    await p.locator("#c-name").waitFor();
    assert.notEqual(await more.getAttribute("open"), null);
    const all = await shown();
    for (const id of ["c-preset", "c-deck", "c-deal", "c-placement", "c-points", "c-name", "c-deadline", "checkbox", "c-deal-json"]) {
      assert.ok(all.includes(id), `${id} is under More options: ${all}`);
    }
    await shoot(p, "32-new-game-more-options");
    for (const [size, viewport] of [["phone", PHONE], ["desktop", DESKTOP]]) {
      await p.setViewportSize(viewport);
      await assertAccessible(p, `the lobby's new-game form with More options (${size})`);
    }
    await p.locator("#lang").selectOption("de");
    assert.equal((await more.locator("summary").textContent()).trim(), "Weitere Optionen");
    assert.equal(await p.locator("label[for=c-bot-strength]").textContent(), "Stärke der Bots");
    await p.locator("#lang").selectOption("en");
    // Closed again by keyboard.
    await more.locator("summary").press("Enter");
    assert.equal(await more.getAttribute("open"), null);

    // The game made from it: three seats, the two bots of the chosen strength; it starts
    // and is played.
    await form.locator("button[type=submit]").click();
    await p.waitForURL(/#\/games\//);
    await p.locator(".game-lobby").waitFor();
    await until(async () => (await p.locator(".seats-list .tag", { hasText: "bot: Expert" }).count()) === 2, 10_000, "the two expert bots");
    assert.equal(await p.locator(".seats-list li").count(), 3);
    assert.match(await p.locator(".game-lobby .options").textContent(), /66 points/);
    await p.locator(".lobby-actions button.primary").click();
    await p.locator(".hand-cards button").first().waitFor();
    assert.equal(await p.locator(".hand-cards button").count(), 10);
    await until(async () => {
      await moveIfAsked(p);
      return (await p.locator(".hand-cards button").count()) < 10;
    }, 30_000, "a turn played with the bots");
    me.assertClean();
    await me.context.close();
  });

  test("an invite link opened while signed out says who invites to which game; as a guest the person is seated", async () => {
    const host = await person(browser, { viewport: DESKTOP, locale: "en-US" });
    await host.page.goto(server.base + "/");
    await signInAsGuest(host.page, "petra");
    // A private game of four with a bot, the Tactics variant (under More options).
    await host.page.locator("#c-bots").selectOption("1");
    const id = await createGame(host.page, {
      ruleset: "6-nimmt",
      players: 4,
      setup: async (q) => {
        await q.locator("#c-preset").selectOption("taktik");
      },
    });
    await host.page.locator(".seats-list .tag", { hasText: "bot" }).waitFor();
    const link = await host.page.locator("#invite-link").inputValue();

    // Someone not signed in opens it: above the sign-in, who invites to which game.
    const guest = await person(browser, { viewport: PHONE, locale: "en-US" });
    const g = guest.page;
    await g.goto(link);
    const note = g.locator(".invite-note");
    await note.locator(".invite-line").waitFor();
    assert.equal(
      (await note.locator(".invite-line").textContent()).replace(/\s+/g, " ").trim(),
      "petra invites you to a game of 6 nimmt! (Taktik) — 2 of 4 seats taken",
    );
    assert.equal(await note.getAttribute("data-invite"), "lobby");
    assert.ok(
      await g.evaluate(() => {
        const n = document.querySelector(".invite-note");
        const form = document.querySelector("#guest-name");
        return n && form && n.compareDocumentPosition(form) & Node.DOCUMENT_POSITION_FOLLOWING;
      }),
      "the note comes before the sign-in form",
    );
    await shoot(g, "33-invite-signed-out");
    for (const [size, viewport] of [["phone", PHONE], ["desktop", DESKTOP]]) {
      await g.setViewportSize(viewport);
      await assertAccessible(g, `the invite's sign-in page (${size})`);
    }
    await assertLabelled(g);

    // In German, and for a code no game has (the server's 404 is expected).
    const reader = await person(browser, { viewport: PHONE, locale: "de-DE" });
    const r = reader.page;
    reader.allow(/404/);
    await r.goto(link);
    await r.locator(".invite-note .invite-line").waitFor();
    assert.equal(
      (await r.locator(".invite-note .invite-line").textContent()).replace(/\s+/g, " ").trim(),
      "petra lädt dich zu einer Partie 6 nimmt! (Taktik) ein — 2 von 4 Plätzen besetzt",
    );
    await r.goto(server.base + "/#/invite/ZZZZZZZZZ2");
    await r.locator(".invite-note .invite-unknown").waitFor();
    assert.match(await r.locator(".invite-note").textContent(), /Dieser Einladungslink ist ungültig/);
    await assertAccessible(r, "an unknown invite code");
    await shoot(r, "34-invite-unknown");
    assert.ok(reader.seen.some((m) => /404/.test(m)), "the unknown code was answered 404");

    // Continuing as a guest seats the person in that game.
    await signInAsGuest(g, "kurt");
    await g.waitForURL(new RegExp(`#/games/${id}$`));
    await g.locator(".seats-list [data-seat='2'] .seat-name", { hasText: "kurt" }).waitFor();
    await host.page.locator(".seats-list [data-seat='2'] .seat-name", { hasText: "kurt" }).waitFor();

    // Once the game has begun, the link says so.
    await addBot(host.page, "random");
    await host.page.locator(".lobby-actions button.primary").click();
    await host.page.locator(".hand-cards button").first().waitFor();
    await r.goto(link);
    await r.locator(".invite-note[data-invite=active]").waitFor();
    assert.match(await r.locator(".invite-note").textContent(), /Diese Partie hat schon begonnen/);
    assert.equal(
      (await r.locator(".invite-note .invite-line").textContent()).replace(/\s+/g, " ").trim(),
      "petra lädt dich zu einer Partie 6 nimmt! (Taktik) ein.",
    );
    await shoot(r, "35-invite-started");
    host.assertClean();
    guest.assertClean();
    reader.assertClean();
    await host.context.close();
    await guest.context.close();
    await reader.context.close();
  });

  test("a variant chosen before the rulesets have answered is the game's variant", async () => {
    // `GET /v1/rulesets` held back: the form is usable before it answers (only "Create game"
    // waits for it). A variant chosen then gets its options when the answer comes; before,
    // the defaults went out as overrides and the game was made without the variant.
    const { me, p, release } = await formWithRulesetsHeld("wilma");
    await p.locator("#c-preset").selectOption("taktik");
    assert.equal(await p.locator("#c-deck").inputValue(), "full", "the rulesets have not answered yet");
    release();
    await until(async () => (await p.locator("#c-deck").inputValue()) === "tactical", 10_000, "the variant's deck");
    const preview = await createAndPreview(p);
    assert.equal(preview.preset, "taktik", JSON.stringify(preview));
    me.assertClean();
    await me.context.close();
  });

  test("a deck chosen by hand before the rulesets have answered is kept", async () => {
    // The other side of the test above: options set by hand while `GET /v1/rulesets` is held
    // back are not replaced by the variant's when it answers; the choice turns custom.
    const { me, p, release } = await formWithRulesetsHeld("xaver");
    assert.equal(await p.locator("#c-preset").inputValue(), "standard");
    await p.locator("#c-deck").selectOption("tactical");
    release();
    await until(async () => (await p.locator("#c-preset").inputValue()) === "", 10_000, "the choice turning custom");
    assert.equal(await p.locator("#c-deck").inputValue(), "tactical", "the deck set by hand");
    const preview = await createAndPreview(p);
    assert.equal(preview.options.deck, "tactical", JSON.stringify(preview));
    me.assertClean();
    await me.context.close();
  });

  test("options set by hand are kept when another ruleset is chosen and then this one again", async () => {
    // A deck set by hand on 6 nimmt! must survive a look at another ruleset: choosing
    // 6 nimmt! again selects its standard variant, which must not put the variant's deck back
    // over the one set by hand (the choice stays custom, and the game gets the deck).
    const { me, p } = await newGameForm("yannick");
    await until(async () => (await p.locator("#c-preset").inputValue()) === "standard", 10_000, "the standard variant");
    await p.locator("#c-deck").selectOption("tactical");
    assert.equal(await p.locator("#c-preset").inputValue(), "", "a deck set by hand makes the choice custom");
    for (const other of ["11-nimmt", "nimm-oder-schieb", "6-nimmt"]) {
      await p.locator("#c-ruleset").selectOption(other);
    }
    // Choosing 6 nimmt! selects its standard variant first; once the form has looked at the
    // options set by hand, the choice is custom again.
    await until(async () => (await p.locator("#c-preset").inputValue()) === "", 10_000, "the choice custom again");
    assert.equal(await p.locator("#c-deck").inputValue(), "tactical", "the deck set by hand");
    const preview = await createAndPreview(p);
    assert.equal(preview.ruleset, "6-nimmt", JSON.stringify(preview));
    assert.equal(preview.options.deck, "tactical", JSON.stringify(preview));
    me.assertClean();
    await me.context.close();
  });

  test("an invite code typed alone seats a signed-in person", async () => {
    const host = await person(browser, { viewport: DESKTOP });
    const guest = await person(browser, { viewport: PHONE });
    await host.page.goto(server.base + "/");
    await signInAsGuest(host.page, "ida");
    const id = await createGame(host.page, { ruleset: "6-nimmt", players: 2 });
    const code = await host.page.locator("[data-invite-code]").textContent();
    await guest.page.goto(server.base + "/");
    await signInAsGuest(guest.page, "jonas");
    // Typed as a person might, in small letters.
    await guest.page.locator("#invite").fill(code.toLowerCase());
    await guest.page.locator("#invite").press("Enter");
    await guest.page.waitForURL(new RegExp(`#/games/${id}$`));
    await guest.page.locator(".seats-list [data-seat='1'] .seat-name", { hasText: "jonas" }).waitFor();
    await host.page.locator(".seats-list [data-seat='1'] .seat-name", { hasText: "jonas" }).waitFor();
    host.assertClean();
    guest.assertClean();
    await host.context.close();
    await guest.context.close();
  });

  test("a score pad round, a correction, the end; and the hand calculator", async () => {
    const me = await person(browser, { viewport: PHONE });
    const p = me.page;
    // The impossible round below is refused by the server on purpose.
    me.allow(/status of 422/);
    me.allow(/HTTP 422: POST .*\/rounds$/);
    await p.goto(server.base + "/");
    await signInAsGuest(p, "hanna");
    await p.locator("header nav a[href='#/pads']").click();
    await p.locator("#p-ruleset").selectOption("6-nimmt");
    for (const [i, n] of ["Hanna", "Ines", "Jan"].entries()) await p.locator(`#p-name-${i}`).fill(n);
    await p.locator("#p-points").selectOption("33");
    await p.locator(".pads form button[type=submit]").click();
    await p.locator(".pad-table").waitFor();
    const enter = async (scores) => {
      for (const [i, s] of scores.entries()) await p.locator(`#pad-score-${i}`).fill(String(s));
      await p.locator(".pad-actions button[type=submit]").click();
    };
    await enter([5, 0, 12]);
    await until(async () => (await p.locator(".pad-table tbody tr:not(.entry)").count()) === 1, 10_000, "round 1");
    assert.deepEqual(await p.locator(".pad-table tfoot td").allTextContents(), ["5", "0", "12"]);
    // An impossible round is refused with a sentence, not JSON.
    await enter([200, 0, 0]);
    const error = await p.locator(".pad .error").first().textContent();
    assert.match(error, /cannot happen/);
    assert.doesNotMatch(error, /[{}]/);
    // A correction: record a round, take it back.
    await enter([10, 2, 3]);
    await until(async () => (await p.locator(".pad-table tbody tr:not(.entry)").count()) === 2, 10_000, "round 2");
    await p.locator(".pad-actions button[type=button]").click();
    await until(async () => (await p.locator(".pad-table tbody tr:not(.entry)").count()) === 1, 10_000, "the correction");
    await enter([30, 2, 3]);
    await p.locator(".pad .winners").waitFor();
    assert.match(await p.locator(".pad .winners").textContent(), /Ines/);
    await shoot(p, "40-score-pad");
    await assertLabelled(p);

    // The seed's example hand: 6, 8 9 10, 13 14 15, 23 24, 33 with 6 chips scores 77.
    await p.locator("header nav a[href='#/calculator']").click();
    for (const label of ["6♣", "8♣", "9♣", "10♣", "K♣", "A♦", "2♦", "10♦", "J♦", "7♥"]) {
      await p.locator(".calculator button.card-button", { has: p.locator(`[aria-label^='${label} ']`) }).click();
    }
    await p.locator("#calc-chips").fill("6");
    await until(async () => (await p.locator(".calculator .total").getAttribute("data-total")) === "77", 10_000, "77 points");
    await shoot(p, "41-calculator");
    await assertLabelled(p);
    me.assertClean();
    await me.context.close();
  });

  test("the page and the API docs run under their Content-Security-Policy", async () => {
    const me = await person(browser, { viewport: DESKTOP });
    const p = me.page;
    // Every test's pages run under the server's policy; a violation fails them (harness).
    const page = await p.goto(server.base + "/");
    const policy = page.headers()["content-security-policy"] ?? "";
    for (const d of ["script-src 'self'", "style-src 'self';", "connect-src 'self'", "frame-ancestors 'none'"]) {
      assert.ok(policy.includes(d), `the page's policy has ${d}: ${policy}`);
    }
    assert.doesNotMatch(policy, /unsafe-(inline|eval)/);
    assert.equal(page.headers()["referrer-policy"], "no-referrer");
    await p.locator("#guest-name").waitFor();
    // Swagger UI: its own policy lets its inline styles through, nothing else.
    const docs = await p.goto(server.base + "/docs/");
    assert.match(docs.headers()["content-security-policy"] ?? "", /style-src 'self' 'unsafe-inline'; /);
    assert.doesNotMatch(docs.headers()["content-security-policy"] ?? "", /script-src[^;]*unsafe/);
    await p.locator(".opblock").first().waitFor();
    // "Try it out" calls the API from the docs page.
    await p.locator("#operations-rulesets-list_rulesets .opblock-summary").click();
    await p.locator("#operations-rulesets-list_rulesets button.try-out__btn").click();
    await p.locator("#operations-rulesets-list_rulesets button.execute").click();
    await p.locator("#operations-rulesets-list_rulesets .live-responses-table .response-col_status", { hasText: "200" }).first().waitFor();
    me.assertClean();
    await me.context.close();
  });

  test("a client on an allowed second origin plays through CORS; another origin is refused", async () => {
    const site = await person(browser, { viewport: DESKTOP });
    const p = site.page;
    await p.goto(allowedSite.origin + "/");
    await signInAsGuest(p, "kai");
    await createGame(p, { ruleset: "6-nimmt", players: 2 });
    await addBot(p, "random");
    await p.locator(".lobby-actions button.primary").click();
    await p.locator(".hand-cards button").first().waitFor();
    // The stream opens cross-origin with a ticket (EventSource cannot send Authorization).
    await p.locator("[data-connection=live]").waitFor();
    await p.locator(".hand-cards button").first().click();
    await p.locator(".log-list li", { hasText: "Cards revealed" }).waitFor();
    site.assertClean();
    await site.context.close();

    // The server sends no CORS headers to an origin that is not on the list …
    const res = await fetch(`${server.base}/v1/rulesets`, { headers: { Origin: otherSite.origin } });
    assert.equal(res.headers.get("access-control-allow-origin"), null);
    const ok = await fetch(`${server.base}/v1/rulesets`, { headers: { Origin: allowedSite.origin } });
    assert.equal(ok.headers.get("access-control-allow-origin"), allowedSite.origin);
    // … so the browser refuses the page's calls, and the page says so in a sentence.
    const other = await person(browser, { viewport: PHONE });
    other.allow(/blocked by CORS policy/);
    other.allow(/Failed to load resource: net::ERR_FAILED/);
    other.allow(/request failed: .* net::ERR_FAILED/);
    await other.page.goto(otherSite.origin + "/");
    await other.page.locator("#guest-name").fill("lena");
    await other.page.locator("form:has(#guest-name) button[type=submit]").click();
    const text = await other.page.locator(".signin .error").first().textContent();
    assert.match(text, /cannot be reached/);
    assert.ok(other.seen.some((m) => /CORS/.test(m)), `the browser reported the CORS refusal: ${other.seen.join("; ")}`);
    assert.ok(
      other.problems.length === 0,
      `only the expected CORS refusal: ${other.problems.join("; ")}`,
    );
    await other.context.close();
  });
  test("two registered people finish a public game: ratings, profiles, and they play again", async () => {
    const ulla = await person(browser, { viewport: PHONE, locale: "en-US" });
    const veit = await person(browser, { viewport: DESKTOP, locale: "de-DE" });
    const a = ulla.page;
    const b = veit.page;
    await a.goto(server.base + "/");
    await register(a, "ulla");
    await b.goto(server.base + "/");
    await register(b, "veit");
    const id = await createGame(a, {
      ruleset: "6-nimmt",
      players: 2,
      setup: async (p) => {
        await p.locator("input[name=end]").nth(1).check();
        await p.locator("#c-rounds").fill("1");
        await p.locator("form.create label.check input[type=checkbox]").check();
      },
    });
    // Veit finds the table among the open games, filtered to those with a free seat.
    await b.locator("#free-seats").selectOption("1");
    const item = b.locator("section[aria-labelledby=open-h] .game-item", { has: b.locator(`a[href='#/games/${id}']`) });
    await until(async () => {
      if ((await item.count()) > 0) return true;
      await b.locator("button[data-refresh]").click();
      return false;
    }, 20_000, "the open game in the list");
    assert.match(await item.textContent(), /1 Platz frei/);
    await shoot(b, "50-lobby-free-seats");
    await item.locator("a.button").click();
    await b.locator(".game-lobby .lobby-actions button.primary").click();
    await a.locator(".seats-list [data-seat='1'] .seat-name", { hasText: "veit" }).waitFor();
    await a.locator(".lobby-actions button.primary").click();
    await b.locator(".hand-cards button").first().waitFor();
    await playToTheEnd([a, b]);
    // The end screen: the places, each one's own place and (a rated game) the rating.
    for (const p of [a, b]) {
      assert.equal(await p.locator(".places li").count(), 2);
      const mine = Number(await p.locator("[data-my-place]").getAttribute("data-my-place"));
      assert.ok(mine === 1 || mine === 2, `own place ${mine}`);
      await p.locator(".rating-change").waitFor({ timeout: 15_000 });
      assert.match(await p.locator(".rating-change").textContent(), /\d+\.\d/);
    }

    // Ulla plays again: she hosts the new game, Veit's seat is kept for him.
    await a.locator("[data-rematch=start]").waitFor();
    await shoot(a, "51-finished-play-again");
    await assertLabelled(a);
    await a.locator("[data-rematch=start]").click();
    await a.waitForURL((u) => u.hash.startsWith("#/games/") && !u.hash.endsWith(id));
    const rematch = decodeURIComponent(a.url().split("#/games/")[1]);
    assert.notEqual(rematch, id);
    await a.locator(".game-lobby [data-reserved=true]").waitFor();
    await a.locator(".rematch-of a[href='#/games/" + id + "']").waitFor();
    // Veit's finished table learns of it by itself and shows its link; he accepts.
    const join = b.locator("[data-rematch=join]");
    await join.waitFor({ timeout: 20_000 });
    assert.equal(await join.textContent(), "Bei der Revanche mitspielen");
    assert.match(await b.locator("#rematch-link").inputValue(), new RegExp(`#/join/${rematch}$`));
    await shoot(b, "52-rematch-offered");
    await assertLabelled(b);
    await join.focus();
    await b.keyboard.press("Enter");
    await b.waitForURL(new RegExp(`#/games/${rematch}$`));
    await b.locator(".seats-list [data-seat='1'] .seat-name", { hasText: "veit" }).waitFor();
    await a.locator(".seats-list [data-seat='1'] .seat-name", { hasText: "veit" }).waitFor();
    assert.equal(await a.locator(".seats-list [data-seat='0'] .seat-name").textContent(), "ulla");
    await shoot(a, "53-rematch-lobby");
    await a.locator(".lobby-actions button.primary").click();
    await a.locator(".hand-cards button").first().waitFor();
    await b.locator(".hand-cards button").first().waitFor();

    // The rated result: both on the leaderboard (once the ratings caught up), with one game each.
    await a.locator("header nav a[href='#/leaderboard']").click();
    await a.locator(".leaderboard h1").waitFor();
    await until(async () => {
      if ((await a.locator(".board tbody tr").count()) === 2) return true;
      await a.reload();
      await a.locator(".leaderboard h1").waitFor();
      return false;
    }, 30_000, "two lines on the leaderboard");
    const lines = await a.locator(".board tbody tr").allTextContents();
    assert.match(lines[0], /^1/);
    assert.ok(lines.some((l) => /ulla/.test(l)) && lines.some((l) => /veit/.test(l)), lines.join(" | "));
    assert.match(lines.join(" "), /provisional/);
    await shoot(a, "54-leaderboard");
    await assertLabelled(a);
    // Veit's profile, from his name on the board: one rated 6 nimmt! game, by keyboard.
    const link = a.locator(".board a.player-link", { hasText: "veit" });
    await link.focus();
    await a.keyboard.press("Enter");
    await a.locator(".profile h1", { hasText: "veit" }).waitFor();
    const row = a.locator(".stats li[data-ruleset='6-nimmt']");
    await row.waitFor();
    assert.equal(await row.locator("[data-stat=games]").textContent(), "1", "one game");
    assert.equal(await row.locator("[data-stat=finished]").textContent(), "100 %", "played to the end");
    assert.equal(await row.locator("[data-stat=rating]").getAttribute("data-rated"), "true");
    const played = a.locator(`.history .game-item[data-game='${id}']`);
    await played.waitFor();
    assert.equal(await played.getAttribute("data-rated"), "true");
    assert.match(await played.textContent(), /place [12] of 2/);
    await shoot(a, "55-profile");
    await assertLabelled(a);
    // His own profile, from the header, in German (his browser's language).
    await b.locator("header nav a[href^='#/players/']").click();
    await b.locator(".profile h1", { hasText: "veit" }).waitFor();
    await b.locator(".stats li[data-ruleset='6-nimmt'] [data-rated=true]").waitFor();
    assert.match(await b.locator("#history-h").textContent(), /Beendete Spiele/);
    ulla.assertClean();
    veit.assertClean();
    await ulla.context.close();
    await veit.context.close();
  });

  test("quick play seats two people at the same table, which starts by itself", async () => {
    const wim = await person(browser, { viewport: PHONE });
    const xena = await person(browser, { viewport: DESKTOP });
    const a = wim.page;
    const b = xena.page;
    await a.goto(server.base + "/");
    await signInAsGuest(a, "wim");
    await b.goto(server.base + "/");
    await signInAsGuest(b, "xena");
    await assertLabelled(a);
    await a.locator("#q-ruleset").selectOption("11-nimmt");
    await a.locator("#q-players").selectOption("2");
    await shoot(a, "60-quick-play");
    await a.locator("form.quick-form button[type=submit]").click();
    await a.waitForURL(/#\/games\//);
    const id = decodeURIComponent(a.url().split("#/games/")[1]);
    await a.locator(".game-lobby").waitFor();
    assert.match(await a.locator(".game-lobby .hint").first().textContent(), /starts by itself/);
    // Xena chooses the same by keyboard and lands at Wim's table; it starts by itself.
    await b.locator("#q-ruleset").selectOption("11-nimmt");
    await b.locator("#q-players").selectOption("2");
    await b.locator("form.quick-form button[type=submit]").focus();
    await b.keyboard.press("Enter");
    await b.waitForURL(new RegExp(`#/games/${id}$`));
    await a.locator(".hand-cards button").first().waitFor();
    await b.locator(".hand-cards button").first().waitFor();
    assert.equal(await b.locator(".seat[data-seat='0'] .seat-name").textContent(), "wim");
    assert.equal(await a.locator(".seat[data-seat='1'] .seat-name").textContent(), "xena");
    await shoot(b, "61-quick-play-table");
    wim.assertClean();
    xena.assertClean();
    await wim.context.close();
    await xena.context.close();
  });

  test("a guest registers from the account page and keeps their games; the new password logs in elsewhere", async () => {
    const otto = await person(browser, { viewport: PHONE, locale: "en-US" });
    const p = otto.page;
    await p.goto(server.base + "/");
    await signInAsGuest(p, "otto");
    const id = await createGame(p, {
      ruleset: "6-nimmt",
      players: 2,
      setup: async (q) => {
        await q.locator("input[name=end]").nth(1).check();
        await q.locator("#c-rounds").fill("1");
      },
    });
    await addBot(p, "random");
    await p.locator(".lobby-actions button.primary").click();
    await p.locator(".hand-cards button").first().waitFor();
    await playToTheEnd([p]);
    // The lobby tells a guest to register, and leads to the account page.
    await p.goto(server.base + "/#/");
    const prompt = p.locator(".register-hint a");
    assert.equal(await prompt.textContent(), "Register to keep your games");
    await prompt.focus();
    await p.keyboard.press("Enter");
    await p.locator(".account-page h1").waitFor();
    assert.equal(await p.locator("[data-account-kind]").getAttribute("data-account-kind"), "guest");
    assert.equal(await p.locator("#register-h").textContent(), "Register to keep your games");
    // Mail is off on this server: a sentence says so, and the choices cannot be changed.
    await p.locator("[data-mail-disabled]").waitFor();
    assert.match(await p.locator("[data-mail-disabled]").textContent(), /sends no e-mail/);
    assert.ok(await p.locator("#mail-turn").isDisabled(), "the choices are off");
    await shoot(p, "70-account-guest");
    await assertLabelled(p);
    // A short password is refused in the page, with a sentence; then registration by keyboard.
    await p.locator("#reg-pw").fill("short");
    await p.locator("#reg-pw").press("Enter");
    assert.match(await p.locator(".register-prompt .error").textContent(), /8 to 128 characters/);
    // A name someone else registered is refused with a sentence; his own name is free.
    const taken = await fetch(`${server.base}/v1/accounts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "otto-taken", password: "someone-elses-pw" }),
    });
    assert.equal(taken.status, 201);
    otto.allow(/status of 409/);
    otto.allow(/HTTP 409: POST .*\/v1\/me\/register$/);
    await p.locator("#reg-name").fill("otto-taken");
    await p.locator("#reg-pw").fill("otto-secret-pw");
    await p.locator("#reg-pw").press("Enter");
    assert.equal(
      await p.locator(".register-prompt .error").first().textContent(),
      "This name is already taken. Please choose another one.",
    );
    await p.locator("#reg-name").fill("otto");
    await p.locator("#reg-pw").press("Enter");
    await p.locator("[data-account-kind=registered]").waitFor();
    assert.match(await p.locator(".account-page .done").first().textContent(), /You are registered/);
    assert.doesNotMatch(await p.locator("[data-account]").textContent(), /guest/);
    await p.locator("#pw-current").waitFor();
    await shoot(p, "71-account-registered");
    await assertLabelled(p);
    // The game is still his: in his games and in his history.
    await p.locator("header nav a[href='#/']").click();
    await p.locator(`section[aria-labelledby=mine-h] a[href='#/games/${id}']`).first().waitFor();
    assert.equal(await p.locator(".register-hint").count(), 0, "no prompt once registered");
    await p.locator("header nav a[href^='#/players/']").click();
    await p.locator(`.history .game-item[data-game='${id}']`).waitFor();
    otto.assertClean();
    await otto.context.close();

    // A fresh browser logs in with the name and the new password and finds the game.
    const again = await person(browser, { viewport: DESKTOP, locale: "de-DE" });
    await again.page.goto(server.base + "/");
    await logIn(again.page, "otto", "otto-secret-pw");
    await again.page.locator("[data-account]").waitFor();
    await again.page.locator(`section[aria-labelledby=mine-h] a[href='#/games/${id}']`).first().waitFor();
    again.assertClean();
    await again.context.close();
  });

  test("a password change refuses the old password; logging out everywhere signs out another browser", async () => {
    const one = await person(browser, { viewport: DESKTOP, locale: "en-US" });
    const p = one.page;
    // The wrong current password below is refused by the server on purpose.
    one.allow(/status of 403/);
    one.allow(/HTTP 403: POST .*\/v1\/me\/password$/);
    await p.goto(server.base + "/");
    await register(p, "paula");
    // A second tab of the same browser, open on the lobby.
    const tab = await one.context.newPage();
    await tab.goto(server.base + "/");
    await tab.locator("section[aria-labelledby=mine-h]").waitFor();
    await openAccount(p);
    await p.locator("#pw-current").fill("not-the-password");
    await p.locator("#pw-new").fill("paula-new-pw-2");
    await p.locator("form:has(#pw-new) button[type=submit]").click();
    const error = await p.locator("form:has(#pw-new) .error").first().textContent();
    assert.equal(error, "The password is wrong.");
    await p.locator("#pw-current").fill("paula-secret-pw");
    await p.locator("form:has(#pw-new) button[type=submit]").click();
    await p.locator(".done", { hasText: "Your password was changed" }).waitFor();
    // The other tab took the fresh token over: its next call is accepted.
    const refreshed = tab.waitForResponse((r) => r.url().includes("/v1/games?") && r.request().method() === "GET");
    await tab.locator("button[data-refresh]").click();
    assert.equal((await refreshed).status(), 200, "the other tab uses the fresh token");
    assert.equal(await tab.locator("#guest-name").count(), 0, "the other tab stays signed in");
    await tab.close();
    // The page stays signed in with the fresh token.
    await p.locator("header nav a[href='#/']").click();
    await p.locator("section[aria-labelledby=mine-h] .empty").waitFor();
    one.assertClean();

    // The old password no longer logs in; the new one does.
    const old = await person(browser, { viewport: PHONE, locale: "de-DE" });
    old.allow(/status of 401/);
    old.allow(/HTTP 401: POST .*\/v1\/tokens$/);
    await old.page.goto(server.base + "/");
    await logIn(old.page, "paula", "paula-secret-pw");
    assert.equal(await old.page.locator(".signin .error").first().textContent(), "Name oder Passwort ist falsch.");
    await old.context.close();
    const two = await person(browser, { viewport: PHONE, locale: "en-US" });
    const q = two.page;
    await q.goto(server.base + "/");
    await logIn(q, "paula", "paula-new-pw-2");
    await q.locator("[data-account]").waitFor();

    // The first browser logs out everywhere, by keyboard and with a confirmation.
    await openAccount(p);
    // Cancelling returns the focus to the button; asking again moves it to the confirmation.
    await p.locator("[data-ask=logout]").focus();
    await p.keyboard.press("Enter");
    await until(() => p.locator("[data-confirm=logout]").evaluate((el) => el === document.activeElement), 5_000, "focus on the confirmation");
    await p.keyboard.press("Tab");
    await p.keyboard.press("Enter");
    await until(() => p.locator("[data-ask=logout]").evaluate((el) => el === document.activeElement), 5_000, "focus back on the button");
    await p.keyboard.press("Enter");
    await until(() => p.locator("[data-confirm=logout]").evaluate((el) => el === document.activeElement), 5_000, "focus on the confirmation");
    await shoot(p, "72-account-logout-confirm");
    await assertLabelled(p);
    await p.keyboard.press("Enter");
    await p.locator("#guest-name").waitFor();
    assert.equal(await p.locator(".signin .notice").textContent(), "You were logged out on every device.");
    assert.equal(await p.evaluate(() => localStorage.getItem("stammtisch.session")), null);
    one.assertClean();
    // The second browser's next call is refused and it shows the sign-in.
    two.allow(/status of 401/);
    two.allow(/HTTP 401: GET .*\/v1\/games/);
    await q.locator("button[data-refresh]").click();
    await q.locator("#guest-name").waitFor();
    assert.equal(await q.locator(".signin .notice").textContent(), "Your session has ended. Please sign in again.");
    assert.ok(two.seen.some((m) => /401/.test(m)), "the server refused the revoked token");
    two.assertClean();
    await one.context.close();
    await two.context.close();
  });

  test("a deleted account shows as deleted player to the other player, and its browser is signed out", async () => {
    const rosa = await person(browser, { viewport: PHONE, locale: "en-US" });
    const sven = await person(browser, { viewport: DESKTOP, locale: "en-US" });
    const a = rosa.page;
    const b = sven.page;
    await a.goto(server.base + "/");
    await register(a, "rosa");
    await createGame(a, {
      ruleset: "6-nimmt",
      players: 2,
      setup: async (q) => {
        await q.locator("input[name=end]").nth(1).check();
        await q.locator("#c-rounds").fill("1");
      },
    });
    const link = await a.locator("#invite-link").inputValue();
    await b.goto(link);
    await signInAsGuest(b, "sven");
    await b.locator(".seats-list [data-seat='1'] .seat-name", { hasText: "sven" }).waitFor();
    await a.locator(".seats-list [data-seat='1'] .seat-name", { hasText: "sven" }).waitFor();
    await a.locator(".lobby-actions button.primary").click();
    await b.locator(".hand-cards button").first().waitFor();
    assert.equal(await b.locator(".seat[data-seat='0'] .seat-name").textContent(), "rosa");

    // Rosa deletes her account: a wrong password is refused, the right one deletes it.
    rosa.allow(/status of 403/);
    rosa.allow(/HTTP 403: DELETE .*\/v1\/me$/);
    await openAccount(a);
    await a.locator("[data-ask=delete]").click();
    await until(() => a.locator("#delete-pw").evaluate((el) => el === document.activeElement), 5_000, "focus on the password");
    await a.keyboard.type("wrong-password");
    await a.locator("[data-confirm=delete]").click();
    assert.equal(await a.locator("form:has(#delete-pw) .error").first().textContent(), "The password is wrong.");
    await shoot(a, "73-account-delete");
    await assertLabelled(a);
    await a.locator("#delete-pw").fill("rosa-secret-pw");
    await a.locator("#delete-pw").press("Enter");
    await a.locator("#guest-name").waitFor();
    assert.equal(await a.locator(".signin .notice").textContent(), "Your account was deleted.");
    rosa.assertClean();

    // Sven's table shows her seat as "deleted player", played on by a bot.
    await b.locator(".seat[data-seat='0'] .seat-name", { hasText: "deleted player" }).waitFor({ timeout: 20_000 });
    await b.locator(".log-list li", { hasText: "resigned" }).first().waitFor();
    await playToTheEnd([b]);
    await b.locator(".status.finished").waitFor();
    assert.doesNotMatch(await b.locator(".game").textContent(), /rosa/);
    await shoot(b, "74-deleted-player");
    // Her name is free again, and the old name no longer logs in.
    rosa.allow(/status of 401/);
    rosa.allow(/HTTP 401: POST .*\/v1\/tokens$/);
    await logIn(a, "rosa", "rosa-secret-pw");
    assert.equal(await a.locator(".signin .error").first().textContent(), "The name or the password is wrong.");
    // Someone new takes the name: the old seat is still "deleted player", not the new rosa.
    await register(a, "rosa");
    await b.reload();
    await b.locator(".status.finished").waitFor();
    assert.equal(await b.locator(".seat[data-seat='0'] .seat-name").textContent(), "deleted player");
    rosa.assertClean();
    // Sven, a guest, deletes his account too: no password to give, just the confirmation.
    await openAccount(b);
    await b.locator("[data-ask=delete]").click();
    assert.equal(await b.locator("#delete-pw").count(), 0, "a guest has no password to confirm with");
    await b.locator("[data-confirm=delete]").click();
    await b.locator("#guest-name").waitFor();
    assert.equal(await b.locator(".signin .notice").textContent(), "Your account was deleted.");
    sven.assertClean();
    await rosa.context.close();
    await sven.context.close();
  });

  test("e-mail reminders: an address confirmed by the mailed link, the choices saved, the address removed", async () => {
    // Its own server, with mail on and a sink for the mails.
    const sink = await startSmtpSink();
    const port = await freePort();
    const own = await startServer({
      port,
      env: { SMTP_URL: sink.url, PUBLIC_URL: `http://127.0.0.1:${port}`, WEBHOOK_BACKOFF_MS: "200" },
    });
    const me = await person(browser, { viewport: PHONE, locale: "de-DE" });
    // The malformed address below is refused by the server on purpose.
    me.allow(/status of 422/);
    me.allow(/HTTP 422: POST .*\/v1\/me\/mail\/address$/);
    // The used link's second confirmation is refused on purpose.
    me.allow(/status of 404/);
    me.allow(/HTTP 404: POST .*\/v1\/mail\/verify$/);
    try {
      const p = me.page;
      await p.goto(own.base + "/");
      await signInAsGuest(p, "tilda");
      await openAccount(p);
      await p.locator("#mail-address").waitFor();
      assert.equal(await p.locator("[data-mail-disabled]").count(), 0);
      assert.equal(await p.locator("#mail-h").textContent(), "Erinnerungen per E-Mail");
      await p.locator("#mail-address").fill("kein-adresse");
      await p.locator("#mail-address").press("Enter");
      assert.match(await p.locator(".mail-address .error").first().textContent(), /Eine Eingabe ist nicht gültig/);
      await p.locator("#mail-address").fill("tilda@example.org");
      await p.locator("#mail-address").press("Enter");
      await p.locator(".mail-address .done", { hasText: "tilda@example.org" }).waitFor();
      await p.locator(".mail-address .hint", { hasText: "24 Stunden" }).waitFor();
      // The mailed link leads to a page that asks before it confirms.
      const mail = await until(() => sink.to("tilda@example.org")[0], 30_000, "the verification mail");
      const link = /http:\/\/\S+\/#\/mail\/verify\/[0-9a-f]+/.exec(mail.body)?.[0];
      assert.ok(link, `a link in the mail: ${mail.body}`);
      // A mail scanner that opens the link gets the page and confirms nothing.
      const scanned = await fetch(link);
      assert.equal(scanned.status, 200);
      await p.reload();
      await p.locator(".mail-address .hint", { hasText: "24 Stunden" }).waitFor();
      assert.equal(await p.locator("[data-mail-address='tilda@example.org']").count(), 0);
      // An account page open in another tab of the same browser shows the confirmation
      // at once, without a reload.
      const other = await me.context.newPage();
      await other.goto(own.base + "/#/account");
      await other.locator(".mail-address .hint", { hasText: "24 Stunden" }).waitFor();
      // The person opens it and confirms, by keyboard.
      await p.goto(link);
      await p.locator("h1", { hasText: "E-Mail-Adresse bestätigen" }).waitFor();
      await shoot(p, "74-verify-mail");
      await assertLabelled(p);
      await assertAccessible(p, "the confirmation page");
      await p.locator(".verify-mail button").focus();
      await p.keyboard.press("Enter");
      await p.locator("[data-mail-verified='tilda@example.org']").waitFor();
      await other.locator("[data-mail-address='tilda@example.org']").waitFor();
      await other.close();
      await shoot(p, "74-verify-mail-done");
      await assertAccessible(p, "the confirmed page");
      // Used once: pressing again on a fresh load says so in words.
      await p.reload();
      await p.locator(".verify-mail button").click();
      await p.locator("[data-mail-link-gone]").waitFor();
      await assertAccessible(p, "the used link's page");
      await p.locator(".verify-mail a", { hasText: "Zu deinem Konto" }).click();
      await p.locator("[data-mail-address='tilda@example.org']").waitFor();
      // Signed out (the link opened in another browser): the page, not the sign-in; in English.
      const stranger = await person(browser, { viewport: DESKTOP });
      stranger.allow(/status of 404/);
      stranger.allow(/HTTP 404: POST .*\/v1\/mail\/verify$/);
      try {
        await stranger.page.goto(link);
        await stranger.page.locator("h1", { hasText: "Confirm your e-mail address" }).waitFor();
        await stranger.page.locator(".verify-mail button", { hasText: "Confirm" }).click();
        await stranger.page.locator("[data-mail-link-gone]").waitFor();
        await stranger.page.locator(".verify-mail a", { hasText: "To Stammtisch" }).waitFor();
        await shoot(stranger.page, "74-verify-mail-used-signed-out");
        await assertAccessible(stranger.page, "the used link's page, signed out");
        stranger.assertClean();
      } finally {
        await stranger.context.close();
      }
      // The choices: no turn mails, a deadline reminder at 6 hours, the daily digest.
      await p.locator("#mail-turn").uncheck();
      await p.locator("#mail-hours").fill("6");
      await p.locator("#mail-digest").check();
      await p.locator(".mail-choices button[type=submit]").click();
      await p.locator(".mail-choices .done", { hasText: "Gespeichert." }).waitFor();
      await shoot(p, "75-account-mail");
      await assertLabelled(p);
      await p.reload();
      await p.locator("[data-mail-address='tilda@example.org']").waitFor();
      assert.equal(await p.locator("#mail-hours").inputValue(), "6");
      assert.equal(await p.locator("#mail-turn").isChecked(), false);
      assert.equal(await p.locator("#mail-digest").isChecked(), true);
      assert.equal(await p.locator("#mail-finished").isChecked(), true);
      // Removing the address stops the mails.
      await p.locator(".mail-address button", { hasText: "Adresse entfernen" }).click();
      await p.locator("[data-mail-address='']").waitFor();
      me.assertClean();
    } finally {
      await me.context.close();
      await own.stop();
      await sink.stop();
    }
  });

  test("a dropped stream reconnects with a fresh ticket after the last event it saw", async () => {
    // Its own server, restarted on the same address and database.
    const port = await freePort();
    const dir = await mkdtemp(join(tmpdir(), "stammtisch-e2e-"));
    let own = await startServer({ port, dir });
    const me = await person(browser, { viewport: PHONE });
    // While the server is down the page's requests fail; that is the point here.
    me.allow(/ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|ERR_EMPTY_RESPONSE|ERR_INCOMPLETE_CHUNKED_ENCODING|ERR_NETWORK_CHANGED/);
    const streams = [];
    me.page.on("request", (r) => {
      if (r.url().includes("/stream?")) streams.push(new URL(r.url()));
    });
    try {
      const p = me.page;
      await p.goto(own.base + "/");
      await signInAsGuest(p, "mia");
      const id = await createGame(p, { ruleset: "6-nimmt", players: 2 });
      const code = await p.locator("[data-invite-code]").textContent();
      const nils = apiClient(own.base);
      await nils.guest("nils");
      await nils.command(id, { type: "join", invite_code: code });
      await p.locator(".lobby-actions button.primary").click();
      await p.locator("[data-connection=live]").waitFor();
      await p.locator(".hand-cards button").first().waitFor();

      await own.stop();
      await p.locator("[data-connection=reconnecting]").waitFor();
      own = await startServer({ port, dir });
      // Nils chooses while Mia's page is (re)connecting: the page must still learn of it.
      const view = await nils.view(id);
      await nils.command(id, { type: "play_card", card: view.you.hand[0] });
      await p.locator("[data-connection=live]").waitFor({ timeout: 30_000 });
      await p.locator(".seat[data-seat='1'] [data-selected=true]").waitFor();
      assert.ok(streams.length >= 2, "the stream was opened again");
      const [first, last] = [streams[0], streams[streams.length - 1]];
      assert.notEqual(first.searchParams.get("ticket"), last.searchParams.get("ticket"), "a fresh ticket");
      assert.ok(
        Number(last.searchParams.get("after")) > Number(first.searchParams.get("after")),
        "resumed after the last event it saw, not from the start",
      );
      me.assertClean();
    } finally {
      await me.context.close();
      await own.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
  test("rules pages: every game and variant in English and German, linked from the header, the lobby and the table", async () => {
    // Each page: its path, its heading, sentences it must say, and (for a variant) that what
    // differs comes first.
    const pages = [
      {
        path: "6-nimmt",
        en: ["Rules of 6 nimmt!", "the sixth card takes the five", "reaches 66 points", "55 has 7"],
        de: ["Regeln zu 6 nimmt!", "Die sechste Karte nimmt die fünf", "66 Punkte erreicht", "die 55 hat 7"],
      },
      {
        path: "6-nimmt/taktik",
        variant: true,
        en: ["Rules of 6 nimmt! – Tactics (Taktik)", "1 to 34 with three players", "every card is in play"],
        de: ["Regeln zu 6 nimmt! – Taktik-Variante", "zu dritt 1 bis 34", "jede Karte im Spiel"],
      },
      {
        path: "6-nimmt/logik",
        variant: true,
        en: ["Rules of 6 nimmt! – Logic (Logik)", "nothing is dealt", "The 4 cards left start the rows"],
        de: ["Regeln zu 6 nimmt! – Logik-Variante", "es wird nicht verteilt", "Die 4 übrigen Karten beginnen die Reihen"],
      },
      {
        path: "6-nimmt/profi",
        variant: true,
        en: ["Rules of 6 nimmt! – Pro (Profi)", "left end of a row", "the right end on a tie"],
        de: ["Regeln zu 6 nimmt! – Profi-Variante", "auch links an eine Reihe", "bei Gleichstand rechts"],
      },
      {
        path: "11-nimmt",
        en: ["Rules of 11 nimmt!", "the 55 has 5, not 7", "At most 9 players"],
        de: ["Regeln zu 11 nimmt!", "die 55 hat 5, nicht 7", "Höchstens 9 Spieler"],
      },
      {
        path: "x-nimmt",
        en: ["Rules of X nimmt!", "for 3, 4 and 5 cards", "onto your X stack", "twice the bullheads in your X stack"],
        de: ["Regeln zu X nimmt!", "für 3, 4 und 5 Karten", "auf deinen X-Stapel", "doppelt die Hornochsen in deinem X-Stapel"],
      },
      {
        path: "nimm-oder-schieb",
        en: ["Rules of Nimm oder schieb", "Without chips you must take", "− 6 = 77"],
        de: ["Regeln zu Nimm oder schieb", "Ohne Chips musst du nehmen", "− 6 = 77"],
      },
    ];
    const me = await person(browser, { viewport: PHONE, locale: "en-US" });
    const p = me.page;

    // Anyone may read the rules, signed in or not.
    await p.goto(server.base + "/#/rules/x-nimmt");
    await p.locator(".rules h1", { hasText: "Rules of X nimmt!" }).waitFor();
    assert.equal(await p.locator("#guest-name").count(), 0, "no sign-in form in front of the rules");

    await p.goto(server.base + "/");
    await signInAsGuest(p, "rhea");
    // The header's entry leads to the index of all of them.
    await p.locator("header nav a[href='#/rules']").click();
    await p.locator(".rules h1", { hasText: /^Rules$/ }).waitFor();
    assert.equal(await p.locator("header nav a[href='#/rules']").getAttribute("aria-current"), "page");
    assert.equal(await p.locator(".rules-index a").count(), pages.length, "the index lists every page");

    const headingsInOrder = async () => {
      const levels = await p.locator("main").evaluate((m) => [...m.querySelectorAll("h1, h2, h3, h4, h5, h6")].map((h) => Number(h.tagName[1])));
      assert.equal(levels[0], 1, "the page starts with its h1");
      assert.equal(levels.filter((l) => l === 1).length, 1, "one h1");
      for (let i = 1; i < levels.length; i++) assert.ok(levels[i] <= levels[i - 1] + 1, `no skipped heading level: ${levels}`);
    };
    const check = async (lang) => {
      for (const pg of pages) {
        const [title, ...sentences] = pg[lang];
        // Through the index's link, as a reader would go.
        await p.locator(`.rules-index a[href='#/rules/${pg.path}']`).click();
        await p.locator(`.rules[data-rules='${pg.path}'] h1`, { hasText: title }).waitFor();
        assert.equal((await p.locator(".rules h1").textContent()).trim(), title);
        assert.equal(await p.locator(`.rules-index a[href='#/rules/${pg.path}']`).getAttribute("aria-current"), "page");
        const text = await p.locator(".rules").textContent();
        for (const s of sentences) assert.ok(text.includes(s), `${pg.path} (${lang}) says "${s}"`);
        if (pg.variant) {
          assert.match(await p.locator(".rules h2").first().textContent(), lang === "en" ? /^What is different$/ : /^Was anders ist$/);
        }
        for (const h of lang === "en" ? ["Goal", "A turn", "Placing and taking", "Scoring and the end"] : ["Ziel", "Ein Zug", "Anlegen und Nehmen", "Wertung und Spielende"]) {
          assert.ok((await p.locator(".rules h2", { hasText: h }).count()) === 1 || pg.path === "nimm-oder-schieb", `${pg.path} (${lang}) has "${h}"`);
        }
        await headingsInOrder();
        await assertLabelled(p);
        // Short: the text itself fits in a screen and a half of a phone.
        await p.setViewportSize(PHONE);
        const height = await p.locator(".rules").evaluate((el) => el.getBoundingClientRect().height);
        assert.ok(height < PHONE.height * 1.5, `${pg.path} (${lang}) is ${Math.round(height)} px tall at phone size`);
        await shoot(p, `70-rules-${pg.path.replace("/", "-")}-${lang}`);
      }
    };
    await check("en");
    await p.locator("#lang").selectOption("de");
    await p.locator(".rules h1", { hasText: "Regeln zu Nimm oder schieb" }).waitFor();
    await check("de");
    await p.locator("#lang").selectOption("en");

    // The lobby's links follow the game (and variant) chosen in each form.
    await p.locator("header nav a[href='#/']").click();
    await p.locator("#q-ruleset").selectOption("x-nimmt");
    assert.equal(await p.locator(".quick .rules-link").getAttribute("href"), "#/rules/x-nimmt");
    assert.equal(await p.locator(".quick .rules-link").textContent(), "Rules of X nimmt!");
    await p.locator("#b-ruleset").selectOption("nimm-oder-schieb");
    assert.equal(await p.locator(".bots .rules-link").getAttribute("href"), "#/rules/nimm-oder-schieb");
    await p.locator("#c-ruleset").selectOption("6-nimmt");
    await openMoreOptions(p);
    await p.locator("#c-preset").selectOption("profi");
    assert.match(await p.locator("#c-preset-hint").textContent(), /left end of a row/);
    await shoot(p, "71-rules-links-lobby");
    await p.locator("form.create .rules-link").click();
    await p.locator(".rules[data-rules='6-nimmt/profi'] h1", { hasText: "Rules of 6 nimmt! – Pro (Profi)" }).waitFor();
    await p.goBack();
    // Back in the lobby (its forms start afresh), the Play now link follows the choice too.
    await p.locator("#q-ruleset").selectOption("11-nimmt");
    await p.locator(".quick .rules-link").click();
    await p.locator(".rules[data-rules='11-nimmt'] h1", { hasText: "Rules of 11 nimmt!" }).waitFor();
    await p.goBack();

    // The table links to the rules of the game played, its variant included.
    const id = await createGame(p, {
      ruleset: "6-nimmt",
      players: 2,
      setup: async (q) => {
        await q.locator("#c-preset").selectOption("logik");
      },
    });
    assert.equal(await p.locator(".game .rules-link").getAttribute("href"), "#/rules/6-nimmt/logik");
    await addBot(p, "random");
    await p.locator(".lobby-actions button.primary").click();
    await p.locator(".table-layout").waitFor();
    await p.locator("#lang").selectOption("de");
    const link = p.locator(".game .rules-link");
    assert.equal(await link.textContent(), "Regeln zu 6 nimmt! – Logik-Variante");
    await shoot(p, "72-rules-link-table");
    await link.click();
    await p.locator(".rules[data-rules='6-nimmt/logik'] h1", { hasText: "Regeln zu 6 nimmt! – Logik-Variante" }).waitFor();
    await p.goBack();
    await p.waitForURL(new RegExp(`#/games/${id}$`));
    await p.locator(".table-layout").waitFor();
    me.assertClean();
    await me.context.close();
  });
});
