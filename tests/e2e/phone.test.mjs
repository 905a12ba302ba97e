// The web client on a phone (375 × 812): what a person needs at the table is on screen at
// once, checked by the elements' positions (not only by screenshots): the current prompt,
// the rows and the hand docked at the bottom, and at a row choice every row's button and the
// revealed cards; the player strip stays at the top while the page scrolls. The viewport
// screenshots (what the person sees, not the full page) go to target/e2e/8x-phone-*.png.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { apiClient, assertAccessible, DESKTOP, isFinished, launch, moveIfAsked, OUT, person, PHONE, signInAsGuest, startServer, until } from "./harness.mjs";

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

/** The boxes (viewport coordinates) of what the table shows, and the viewport's size. */
function layout(page) {
  return page.evaluate(() => {
    const box = (e) => {
      const b = e.getBoundingClientRect();
      return { top: b.top, bottom: b.bottom, left: b.left, right: b.right };
    };
    const one = (sel) => {
      const e = document.querySelector(sel);
      return e ? box(e) : null;
    };
    const all = (sel) => [...document.querySelectorAll(sel)].map(box);
    return {
      vw: window.innerWidth,
      vh: window.innerHeight,
      pageWidth: document.documentElement.scrollWidth,
      header: one("header.top"),
      strip: one(".seat-strip"),
      status: one(".table-main .status"),
      rows: one(".rows"),
      rowBoxes: all(".rows .row"),
      take: all("button.take-row"),
      revealed: all(".revealed .card"),
      hand: one(".table-main .hand"),
      handCards: all(".hand-cards .card"),
      handPosition: (() => {
        const h = document.querySelector(".table-main .hand");
        return h ? getComputedStyle(h).position : null;
      })(),
    };
  });
}

/** Fails unless `b` lies inside the viewport and above the docked hand (not hidden by it). */
function seen(l, b, what) {
  assert.ok(b, `${what} is on the page`);
  const floor = l.hand ? l.hand.top : l.vh;
  assert.ok(b.top >= 0, `${what}: its top (${b.top}) is on screen`);
  assert.ok(b.bottom <= floor + 0.5, `${what}: its bottom (${b.bottom}) is above the docked hand (${floor})`);
  assert.ok(b.left >= 0 && b.right <= l.vw + 0.5, `${what}: within the screen's width (${b.left}..${b.right} of ${l.vw})`);
}

/** Fails unless the hand is docked at the bottom and shows every card of it. */
function docked(l) {
  assert.equal(l.handPosition, "fixed", "the hand is docked");
  assert.ok(Math.abs(l.hand.bottom - l.vh) <= 1, `the hand ends at the screen's bottom (${l.hand.bottom} of ${l.vh})`);
  assert.ok(l.hand.top > l.vh / 2, `the hand takes less than half the screen (top at ${l.hand.top})`);
  for (const [i, c] of l.handCards.entries()) {
    assert.ok(c.top >= l.hand.top && c.bottom <= l.vh + 0.5, `hand card ${i + 1} is visible in the dock`);
    assert.ok(c.left >= 0 && c.right <= l.vw + 0.5, `hand card ${i + 1} is within the screen's width`);
  }
}

describe("the web client on a phone", () => {
  test("rows, the docked hand and the prompt are on screen together, at a row choice too; the player strip stays in view", async () => {
    const me = await person(browser, { viewport: PHONE });
    const p = me.page;
    await p.goto(server.base + "/");
    await signInAsGuest(p, "pia");
    // Quentin, driven through the API, hosts a prepared deal: Pia's 1 is below every row, so
    // her first card makes her choose a row.
    const quentin = apiClient(server.base);
    await quentin.guest("quentin");
    const deal = {
      rows: [[10], [20], [30], [40]],
      hands: [
        [50, 51, 52, 53, 54, 55, 56, 57, 58, 59],
        [1, 60, 61, 62, 63, 64, 65, 66, 67, 68],
      ],
    };
    const game = await quentin.create({ ruleset: "6-nimmt", players: 2, deal, options: { end: { rounds: 1 } } });
    const view = await quentin.view(game.id);
    assert.ok(view.invite_code, "the host sees the invite code");
    await p.goto(`${server.base}/#/join/${game.id}/${view.invite_code}`);
    await p.locator(".game-lobby").waitFor();
    await quentin.command(game.id, { type: "start" });
    await p.locator(".hand-cards button").first().waitFor();

    // The header is two short lines, not a third of the screen.
    let l = await layout(p);
    assert.ok(l.header.bottom - l.header.top <= 100, `the header is at most 100 px high (${l.header.bottom - l.header.top})`);
    const line = await p.evaluate(() => {
      const mid = (sel) => {
        const b = document.querySelector(sel).getBoundingClientRect();
        return (b.top + b.bottom) / 2;
      };
      return { brand: mid("header .brand"), signOut: mid("header .account button") };
    });
    assert.ok(Math.abs(line.brand - line.signOut) < 12, "the brand and the account share the header's first line");
    assert.ok(l.pageWidth <= l.vw, `nothing is wider than the screen (${l.pageWidth} > ${l.vw})`);
    // Choosing a card: the prompt, the four rows and all ten cards of the hand at once.
    docked(l);
    assert.equal(l.handCards.length, 10);
    seen(l, l.strip, "the player strip");
    seen(l, l.status, "the prompt");
    seen(l, l.rows, "the rows");
    assert.equal(l.rowBoxes.length, 4);
    assert.match(await p.locator(".table-main .status").textContent(), /Choose a card/);
    await p.screenshot({ path: join(OUT, "80-phone-choose-viewport.png") });
    await assertAccessible(p, "the table on a phone");

    // Pia plays her 1, Quentin his 50: she must take a row. Every row's button, the revealed
    // cards and the prompt are on screen above her hand, and the focus is on the cheapest row.
    await p.locator(".hand-cards button[data-card='1']").click();
    await p.locator(".seat-strip [data-strip-seat='1'][data-strip-state='chosen']").waitFor();
    await quentin.command(game.id, { type: "play_card", card: 50 });
    await p.locator("button.take-row").nth(3).waitFor();
    await until(() => p.evaluate(() => document.activeElement?.matches(".take-row[data-cheapest]") ?? false), 10_000, "the focus on the cheapest row");
    await p.screenshot({ path: join(OUT, "81-phone-take-row-viewport.png") });
    l = await layout(p);
    docked(l);
    seen(l, l.status, "the take-row prompt");
    assert.equal(l.take.length, 4, "four rows to choose from");
    for (const [i, b] of l.take.entries()) seen(l, b, `the button of row ${i + 1}`);
    assert.equal(l.revealed.length, 2, "both revealed cards are shown");
    for (const [i, b] of l.revealed.entries()) seen(l, b, `revealed card ${i + 1}`);
    seen(l, l.strip, "the player strip");
    assert.match(await p.locator(".table-main .status").textContent(), /row/);
    // The button's name for a screen reader is the full sentence, though the phone shows "Take 3🐂".
    assert.equal(await p.locator("button.take-row[data-cheapest]").getAttribute("aria-label"), null);
    const short = p.locator("button.take-row[data-cheapest] .take-short");
    assert.ok(await short.isVisible(), "the short label is shown");
    assert.match(await short.innerText(), /^Take 3/);
    assert.ok(await p.getByRole("button", { name: "Take row 1 (3 bullheads)", exact: true }).isVisible(), "the full sentence names the button");
    await assertAccessible(p, "a row choice on a phone");
    // Taken by keyboard: Enter on the focused cheapest row.
    await p.keyboard.press("Enter");
    await until(async () => (await p.locator("button.take-row").count()) === 0, 10_000, "the row taken");

    // Scrolled down to the log: the strip stays at the top and the hand stays docked; the
    // log at the page's end is not hidden behind the hand.
    await p.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    await p.waitForTimeout(100);
    l = await layout(p);
    assert.ok(l.strip.top >= 0 && l.strip.top <= 2, `the strip stays at the top (${l.strip.top})`);
    docked(l);
    const log = await p.locator(".log").boundingBox();
    assert.ok(log && log.y + log.height <= l.hand.top, "the log at the page's end is above the hand");
    await p.screenshot({ path: join(OUT, "82-phone-scrolled-viewport.png") });

    // On a wide screen the same table has no strip and no docked hand (the panels beside
    // the table show the players).
    await p.setViewportSize(DESKTOP);
    await p.waitForTimeout(100);
    l = await layout(p);
    assert.equal(l.strip.bottom - l.strip.top, 0, "no strip on a wide screen");
    assert.equal(l.handPosition, "static");
    await p.setViewportSize(PHONE);

    // Quentin leaves the rest to a bot; Pia plays to the end on the phone.
    await quentin.command(game.id, { type: "resign" });
    const end = Date.now() + 120_000;
    while (!(await isFinished(p))) {
      assert.ok(Date.now() < end, "the game finishes");
      await moveIfAsked(p);
      await p.waitForTimeout(200);
    }
    await p.locator(".status.finished").waitFor();
    await p.evaluate(() => window.scrollTo(0, 0));
    await p.screenshot({ path: join(OUT, "83-phone-finished-viewport.png") });
    me.assertClean();
    await me.context.close();
  });
});
