// Clocks in the web client (issue 28): a live game against a bot made from the new-game form
// by keyboard, whose person's clock ticks down on the page (the page's own clock moved with
// Playwright's clock, the server's with POST /test/clock) and runs out, so that the server
// moves for the person and the log says so; at 375 and 1280 px. A people-only game where the
// others decide: the clock that ran out says "out of time" and the other person lets a bot
// play the seat; a correspondence game's pause proposed, accepted and resumed; vacation on
// the account page. The server runs with the test clock: no test waits for time to pass.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { apiClient, assertAccessible, DESKTOP, launch, person, PHONE, shoot, signInAsGuest, startServer, until } from "./harness.mjs";

let server;
let browser;
let names = 0;
/** A guest name no other test on this server has taken. */
const unique = (prefix) => `${prefix}${++names}`;

before(async () => {
  server = await startServer({ env: { STAMMTISCH_TEST_CLOCK: "true" } });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** Moves the server's clock forward; resolves with the server's time after it (ms). */
async function advance(seconds) {
  const res = await fetch(`${server.base}/test/clock`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ advance_seconds: seconds }),
  });
  assert.equal(res.status, 200, "the server runs with the test clock");
  return Date.parse((await res.json()).now);
}

/** A second person, driven through the API. */
async function other(name) {
  const c = apiClient(server.base);
  await c.guest(name);
  return c;
}

/** The seconds a seat's clock shows (its `data-clock-ms`), in the panel beside the table. */
async function shownSeconds(p, seat, where = ".seat-panels") {
  const ms = await p.locator(`${where} [data-clock-seat="${seat}"]`).getAttribute("data-clock-ms");
  return Number(ms) / 1000;
}

/** Puts the focus on `sel` by pressing Tab (at most `max` times): it is keyboard reachable. */
async function tabTo(p, sel, max = 80) {
  for (let i = 0; i < max; i++) {
    await p.keyboard.press("Tab");
    if (await p.evaluate((s) => document.activeElement?.matches(s) ?? false, sel)) return;
  }
  throw new Error(`${sel} was not reached by Tab`);
}

describe("clocks in the web client", () => {
  for (const [size, viewport] of [
    ["phone", PHONE],
    ["desktop", DESKTOP],
  ]) {
    test(`a live clock ticks down and runs out: the server moves for the person, and the log says so (${size})`, async () => {
      const me = await person(browser, { viewport });
      const p = me.page;
      // The page's clock is Playwright's, so its ticking can be moved on without waiting.
      await me.context.clock.install();
      await p.goto(server.base + "/");
      await signInAsGuest(p, unique("clara"));

      // The new-game form by keyboard: 6 nimmt! for two, one bot, the live 3 + 2 clock.
      await p.locator("#c-players").fill("2");
      await p.locator("#c-bots").selectOption("1");
      await tabTo(p, "#c-tc");
      const choices = await p.locator("#c-tc option").allTextContents();
      assert.deepEqual(choices, [
        "No clock",
        "Live: 3 min + 2 s",
        "Live: 10 min + 5 s",
        "Correspondence: 1 day + 1 day, max 3 days",
        "Correspondence: 3 days + 1 day, max 7 days",
        "Custom (see More options)",
      ]);
      await p.keyboard.press("ArrowDown");
      assert.equal(await p.locator("#c-tc").inputValue(), "live-3-2");
      // A game with a clock has no time per move: "More options" shows the clock's values instead.
      await p.locator("form.create details.more-options summary").click();
      assert.equal(await p.locator("#c-deadline").count(), 0);
      assert.equal(await p.locator("#c-tc-initial").inputValue(), "3");
      assert.equal(await p.locator("#c-tc-increment").inputValue(), "2");
      await p.locator("form.create button[type=submit]").focus();
      await p.keyboard.press("Enter");
      await p.locator(".game-lobby").waitFor();
      assert.match(await p.locator(".tc-line").textContent(), /Live · 3 min \+ 2 s/);
      await p.locator(".lobby-actions button.primary").click();

      // The table: my clock runs (I choose a card), the bot's does not.
      const mine = p.locator(`.seat-panels [data-clock-seat="0"]`);
      await mine.waitFor();
      await until(async () => (await mine.getAttribute("data-clock-state")) === "running", 10_000, "my clock running");
      assert.equal(await p.locator(`.seat-panels [data-clock-seat="1"]`).getAttribute("data-clock-state"), "stopped");
      assert.equal(await mine.getAttribute("role"), "timer");
      assert.equal(await mine.getAttribute("aria-live"), "off", "a ticking clock is not announced");
      assert.match(await mine.getAttribute("aria-label"), /: \d+ minutes?( \d+ seconds?)? left, running$/);
      if (size === "phone") await p.locator(`.seat-strip [data-clock-seat="0"]`).waitFor();
      const start = await shownSeconds(p, 0);
      assert.ok(start <= 180 && start > 170, `about 3 minutes at the start (${start} s)`);

      // Ten seconds on the page's clock: the clock shows ten seconds less, on its own.
      await p.clock.runFor(10_000);
      const later = await shownSeconds(p, 0);
      // 8–11: the first reading may be a tick late when the page renders under load (CI saw
      // 180 → 172 once, on a machine busy with the HTTP tests' last processes).
      assert.ok(start - later >= 8 && start - later <= 11, `ten seconds ticked off (${start} → ${later})`);
      assert.match(await mine.textContent(), /^2:[45]\d$/);

      // A minute on the server's clock: a fresh view of the table shows a minute less (the
      // page corrects for its own clock, which is now ten seconds ahead of the server's).
      // (Opened afresh within the page, to the lobby and back: a reload would restart the
      // page's clock under Playwright's, which it then moves.)
      await advance(60);
      const table = new URL(p.url()).hash;
      await p.evaluate(() => (location.hash = "#/"));
      await p.locator("#mine-h").waitFor();
      const id = table.split("/").pop();
      let views = 0;
      p.on("response", (r) => {
        if (r.request().method() === "GET" && r.url().endsWith(`/v1/games/${id}`)) views += 1;
      });
      await p.evaluate((h) => (location.hash = h), table);
      await mine.waitFor();
      // The page asks for the view again once its stream is open; its clocks are read as of
      // that answer's arrival, so the page's clock is moved on only after it.
      await p.locator("[data-connection=live]").waitFor();
      await until(() => views >= 2, 10_000, "the view after the stream opened");
      const fresh = await shownSeconds(p, 0);
      assert.ok(start - fresh >= 59 && start - fresh <= 66, `a minute less after the server's minute (${start} → ${fresh})`);
      // Low: under 30 s is red.
      assert.ok(!(await mine.getAttribute("class")).includes("low"));
      await p.clock.runFor((fresh - 25) * 1000);
      await until(
        async () => (await mine.getAttribute("class")).includes("low"),
        5_000,
        `the clock red when low (${fresh} s; now ${await mine.getAttribute("class")}, ${await mine.getAttribute("data-clock-ms")} ms)`,
      );
      await shoot(p, `c0-clock-low-${size}`);
      await assertAccessible(p, `a ticking clock (${size})`);

      // The server's clock passes the flag: it runs out, the server chooses my card for me.
      await advance(200);
      const log = p.locator(".log-list");
      await log.locator("li", { hasText: /ran out of time/ }).waitFor({ timeout: 20_000 });
      await log.locator("li", { hasText: /\(out of time\)/ }).first().waitFor({ timeout: 20_000 });
      await shoot(p, `c1-clock-ran-out-${size}`);
      await assertAccessible(p, `a clock run out (${size})`);
      me.assertClean();
      await me.context.close();
    });
  }

  test("a custom clock from More options: its values in days and hours, what happens at zero, no vacation; a clock out of range said before asking", async () => {
    const me = await person(browser, { viewport: PHONE });
    const p = me.page;
    await p.goto(server.base + "/");
    await signInAsGuest(p, unique("ida"));
    await p.locator("#c-players").fill("2");
    await p.locator("#c-tc").selectOption("custom");
    // "More options" opens at the clock's first field.
    await until(() => p.evaluate(() => document.activeElement?.id === "c-tc-kind"), 5_000, "the focus on the clock's kind");
    // Out of range (a live clock of 12 seconds): a sentence, and no game.
    await p.locator("#c-tc-initial").fill("0.2");
    await p.locator("form.create button[type=submit]").click();
    assert.match(await p.locator("form.create").textContent(), /A live clock starts with 30 seconds to 2 hours/);
    assert.match(p.url(), /#\/$|\/$/);
    await p.locator("#c-tc-kind").selectOption("correspondence");
    await p.locator("#c-tc-initial").fill("2");
    await p.locator("#c-tc-increment").fill("12");
    await p.locator("#c-tc-max").fill("");
    await p.locator("#c-tc-zero").selectOption("others_decide");
    await p.locator(".tc-fields input[type=checkbox]").uncheck();
    await assertAccessible(p, "the clock's own values");
    await p.locator("form.create button[type=submit]").click();
    await p.locator(".game-lobby").waitFor();
    assert.match(await p.locator(".tc-line").textContent(), /Correspondence · 2 days \+ 12 h/);
    const id = decodeURIComponent(p.url().split("#/games/")[1]);
    const token = await p.evaluate(() => JSON.parse(localStorage.getItem("stammtisch.session")).token);
    const view = await (await fetch(`${server.base}/v1/games/${id}`, { headers: { authorization: `Bearer ${token}` } })).json();
    assert.deepEqual(view.time_control, {
      kind: "correspondence",
      initial_seconds: 2 * 86400,
      increment_seconds: 12 * 3600,
      at_zero: "others_decide",
      vacation: false,
    });
    me.assertClean();
    await me.context.close();
  });

  test("others decide: a clock that ran out says so, and the other person lets a bot play that seat (by keyboard)", async () => {
    const me = await person(browser, { viewport: DESKTOP });
    const p = me.page;
    await p.goto(server.base + "/");
    await signInAsGuest(p, unique("dora"));
    const emil = await other(unique("emil"));
    const game = await emil.create({
      ruleset: "6-nimmt",
      players: 2,
      options: { end: { rounds: 1 } },
      time_control: { kind: "live", initial_seconds: 60, increment_seconds: 0, at_zero: "others_decide" },
    });
    const view = await emil.view(game.id);
    await p.goto(`${server.base}/#/join/${game.id}/${view.invite_code}`);
    await p.locator(".game-lobby").waitFor();
    await emil.command(game.id, { type: "start" });
    await p.locator(".hand-cards button").first().waitFor();
    await p.locator("[data-connection=live]").waitFor();
    // I (seat 2) choose; Emil (seat 1) does not, and his minute runs out.
    await p.locator(".hand-cards button").first().click();
    await until(async () => (await p.locator(`.seat-panels [data-clock-seat="1"]`).getAttribute("data-clock-state")) === "stopped", 10_000, "my clock stopped");
    await advance(61);
    const emilsClock = p.locator(`.seat-panels [data-clock-seat="0"]`);
    const button = p.locator("[data-hand-to-bot]");
    await button.waitFor({ timeout: 20_000 });
    assert.match(await button.textContent(), /^Let a bot play for emil\d+$/);
    assert.equal(await emilsClock.getAttribute("data-clock-state"), "out");
    assert.match(await emilsClock.textContent(), /out of time/);
    assert.match(await p.locator("[data-flagged]").textContent(), /ran out of time/);
    await shoot(p, "c2-clock-others-decide");
    await assertAccessible(p, "a flagged seat");
    await tabTo(p, "[data-hand-to-bot]");
    await p.keyboard.press("Enter");
    await p.locator(".log-list li", { hasText: /let a bot play for emil/ }).waitFor({ timeout: 20_000 });
    await until(async () => (await p.locator("[data-hand-to-bot]").count()) === 0, 10_000, "the button gone");
    me.assertClean();
    await me.context.close();
  });

  test("a correspondence game's pause: proposed by keyboard, accepted by the other person, resumed", async () => {
    const me = await person(browser, { viewport: PHONE });
    const p = me.page;
    await p.goto(server.base + "/");
    await signInAsGuest(p, unique("frida"));
    const gus = await other(unique("gus"));
    const game = await gus.create({
      ruleset: "6-nimmt",
      players: 2,
      options: { end: { rounds: 1 } },
      time_control: { kind: "correspondence", initial_seconds: 3 * 86400, increment_seconds: 86400, max_seconds: 7 * 86400 },
    });
    const view = await gus.view(game.id);
    await p.goto(`${server.base}/#/join/${game.id}/${view.invite_code}`);
    await p.locator(".game-lobby").waitFor();
    await gus.command(game.id, { type: "start" });
    await p.locator(".hand-cards button").first().waitFor();
    await p.locator("[data-connection=live]").waitFor();
    assert.match(await p.locator(".tc-line").textContent(), /Correspondence · 3 days \+ 1 day, max 7 days/);
    assert.match(await p.locator(`.seat-panels [data-clock-seat="1"]`).textContent(), /3 d 0 h|2 d 23 h/);

    await tabTo(p, "[data-clock-cmd=propose_pause]");
    await p.keyboard.press("Enter");
    await p.locator("[data-pause=proposed]").waitFor();
    assert.match(await p.locator("[data-pause=proposed]").textContent(), /proposes a pause/);
    await gus.command(game.id, { type: "accept_pause" });
    await p.locator("[data-pause=paused]", { hasText: "Clocks paused." }).waitFor({ timeout: 20_000 });
    // Paused: the page shows the server's banks, standing; a day on the server's clock takes
    // nothing off.
    const bank = async () => {
      const v = await gus.view(game.id);
      const c = v.clocks.find((x) => x.seat === 1);
      assert.equal(c.running, false);
      return Math.ceil(c.remaining_ms / 1000);
    };
    const before = await bank();
    await until(async () => (await shownSeconds(p, 1)) === before, 10_000, "the paused bank shown");
    await advance(86400);
    await p.reload();
    await p.locator("[data-pause=paused]").waitFor();
    assert.equal(await bank(), before);
    assert.equal(await shownSeconds(p, 1), before);
    await shoot(p, "c3-clock-paused");
    await assertAccessible(p, "paused clocks");
    await tabTo(p, "[data-clock-cmd=resume]");
    await p.keyboard.press("Enter");
    await until(async () => (await p.locator("[data-pause]").count()) === 0, 20_000, "the clocks resumed");
    await p.locator(".log-list li", { hasText: /resumes the clocks/ }).waitFor();
    me.assertClean();
    await me.context.close();
  });

  test("vacation on the account page: hours left as days and hours, away until a date, back now", async () => {
    const me = await person(browser, { viewport: PHONE });
    const p = me.page;
    await p.goto(server.base + "/");
    const name = unique("hanna");
    await signInAsGuest(p, name);
    await p.goto(server.base + "/#/account");
    // A guest has none.
    await p.locator("[data-vacation=guest]").waitFor();
    await p.locator("#reg-pw").fill("a-long-password");
    await p.locator(".register-prompt button[type=submit]").click();
    await p.locator("[data-account-kind=registered]").waitFor();
    const hours = p.locator("[data-vacation-hours]");
    await hours.waitFor();
    assert.equal(await hours.getAttribute("data-vacation-hours"), String(14 * 24));
    assert.match(await hours.textContent(), /Left this year: 14 days \(of 14 days a year\)\./);
    // Away for two days and a bit (by the server's clock, which earlier tests moved on): 49
    // hours are spent now.
    const serverNow = await advance(0);
    const away = serverNow + 49 * 3_600_000 - 10 * 60_000;
    const local = await p.evaluate((ms) => {
      const d = new Date(ms);
      const two = (n) => String(n).padStart(2, "0");
      return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}`;
    }, away);
    await p.locator("#away-until").fill(local);
    await p.locator("form:has(#away-until) button[type=submit]").click();
    await p.locator("[data-away-until]").waitFor();
    assert.equal(await hours.getAttribute("data-vacation-hours"), String(14 * 24 - 49));
    assert.match(await hours.textContent(), /Left this year: 11 days 23 h/);
    await shoot(p, "c4-vacation-away");
    await assertAccessible(p, "vacation, away");
    await tabTo(p, "[data-back-now]");
    await p.keyboard.press("Enter");
    await p.locator("#away-until").waitFor();
    assert.ok(Number(await hours.getAttribute("data-vacation-hours")) >= 14 * 24 - 1, "the unused whole hours came back");
    me.assertClean();
    await me.context.close();
  });
});
