// The installable web app: the service worker keeps the app's shell, so the client opens
// offline, with the person's games as last seen; a move made while the server cannot be
// reached waits and is sent when the connection returns, exactly once (its Idempotency-Key
// makes a resend safe, also when only the answer was lost), and a waiting move the game
// has meanwhile left behind is dropped and the person told so. The server runs with the
// test clock, so a deadline can pass without waiting.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { apiClient, assertAccessible, launch, OUT, person, PHONE, signInAsGuest, startServer, until } from "./harness.mjs";

let server;
let browser;

before(async () => {
  server = await startServer({ env: { STAMMTISCH_TEST_CLOCK: "true" } });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** A two-seat 6 nimmt! game hosted by `host` (API) with the browser's person in seat 1, started. */
async function seatedGame(page, host, extra = {}) {
  const game = await host.create({ ruleset: "6-nimmt", players: 2, options: { end: { rounds: 1 } }, ...extra });
  const view = await host.view(game.id);
  await page.goto(`${server.base}/#/join/${game.id}/${view.invite_code}`);
  await page.locator(".game-lobby").waitFor();
  await host.command(game.id, { type: "start" });
  await page.locator(".hand-cards button").first().waitFor();
  return game.id;
}

/** The choices recorded for the person on `page` in game `id`, one `{card, cause}` per
 *  `card_selected` event (which only its own seat may read), in order. */
async function choicesOf(page, id) {
  const token = await page.evaluate(() => JSON.parse(localStorage.getItem("stammtisch.session")).token);
  const res = await fetch(`${server.base}/v1/games/${id}/events?after=0&limit=500`, { headers: { authorization: `Bearer ${token}` } });
  const body = await res.json();
  return body.items.filter((e) => e.type === "card_selected").map((e) => e.data);
}

/** Waits until the page's service worker is installed and active (`ready` may resolve while
 *  it is still activating). */
function workerActive(page) {
  return until(
    () => page.evaluate(async () => (await navigator.serviceWorker.ready).active?.state === "activated"),
    15_000,
    "the service worker installed and active",
  );
}

/** A second person, driven through the API. */
async function host(name) {
  const c = apiClient(server.base);
  await c.guest(name);
  return c;
}

describe("the web client offline", () => {
  test("installable: a manifest with icons, and a service worker that opens the app offline with the person's games as last seen", async () => {
    const me = await person(browser, { viewport: PHONE });
    const p = me.page;
    await p.goto(server.base + "/");
    // The manifest names the app and its icons; the icons are served.
    const manifest = await p.evaluate(async () => {
      const href = document.querySelector('link[rel="manifest"]').href;
      return (await fetch(href)).json();
    });
    assert.equal(manifest.name, "Stammtisch");
    assert.equal(manifest.display, "standalone");
    for (const size of ["192x192", "512x512"]) {
      const icon = manifest.icons.find((i) => i.sizes === size && i.type === "image/png");
      assert.ok(icon, `a ${size} PNG icon`);
      const res = await p.request.get(new URL(icon.src, server.base + "/").href);
      assert.equal(res.status(), 200);
      assert.equal(res.headers()["content-type"], "image/png");
    }
    await workerActive(p);

    await signInAsGuest(p, "olga");
    const quentin = await host("quentin");
    const id = await seatedGame(p, quentin);
    await p.locator(".rows .row").first().waitFor();
    // The lobby lists her game (and keeps the list for offline).
    await p.goto(server.base + "/#/");
    await p.locator(`#mine-h ~ ul a[href$='${id}']`).first().waitFor();

    // Offline, a reload still opens the app: the shell comes from the worker's cache.
    await p.context().setOffline(true);
    me.allow(/request failed|Failed to fetch|ERR_INTERNET_DISCONNECTED/);
    await p.reload();
    await p.locator(".lobby h1").waitFor();
    await p.locator(`#mine-h ~ ul a[href$='${id}']`).first().waitFor();
    await p.screenshot({ path: join(OUT, "90-offline-lobby-phone.png") });
    // The game reads as last seen, and says so.
    await p.goto(`${server.base}/#/games/${id}`);
    await p.locator("[data-offline-seen]").waitFor();
    await p.locator(".hand-cards .card").first().waitFor();
    await p.locator(".rows .row").nth(3).waitFor();
    await p.screenshot({ path: join(OUT, "91-offline-game-phone.png") });
    await assertAccessible(p, "a game offline");
    // The worker keeps the shell only: no answer of the API is in its cache.
    const cached = await p.evaluate(async () => {
      const urls = [];
      for (const name of await caches.keys()) {
        for (const req of await (await caches.open(name)).keys()) urls.push(new URL(req.url).pathname);
      }
      return urls;
    });
    assert.ok(cached.includes("/") && cached.includes("/app.js"), `the shell is cached (${cached.join(", ")})`);
    assert.deepEqual(
      cached.filter((u) => u.startsWith("/v1/")),
      [],
      "no API answer is cached",
    );
    await p.context().setOffline(false);
    await p.locator("[data-connection=live]").waitFor({ timeout: 30_000 });
    await until(async () => (await p.locator("[data-offline-seen]").count()) === 0, 10_000, "the live view replacing the copy");
    me.assertClean();
    await me.context.close();
  });

  test("a move made offline is sent once the connection returns, exactly once, also when only its answer was lost", async () => {
    const me = await person(browser, { viewport: PHONE });
    const p = me.page;
    await p.goto(server.base + "/");
    await signInAsGuest(p, "paula");
    const rudi = await host("rudi");
    const id = await seatedGame(p, rudi);
    await p.locator("[data-connection=live]").waitFor();

    // Offline: the chosen card waits, and the page says so.
    await p.context().setOffline(true);
    me.allow(/request failed|Failed to fetch|ERR_INTERNET_DISCONNECTED/);
    const card = await p.locator(".hand-cards button").first().getAttribute("data-card");
    await p.locator(`.hand-cards button[data-card='${card}']`).click();
    await p.locator("[data-pending-move=play_card]").waitFor();
    assert.match(await p.locator("[data-pending-move]").textContent(), new RegExp(`Not sent yet: play ${card}\\.`));
    await p.screenshot({ path: join(OUT, "92-offline-move-waiting-phone.png") });
    assert.equal((await rudi.view(id)).seats[1].selected, false, "nothing reached the server");
    // Back online: it goes out by itself.
    await p.context().setOffline(false);
    await until(async () => (await p.locator("[data-pending-move]").count()) === 0, 20_000, "the waiting move sent");
    await until(async () => (await rudi.view(id)).seats[1].selected === true, 10_000, "the choice at the server");
    await p.locator(`.hand-cards button[data-card='${card}'][aria-pressed=true]`).waitFor();
    assert.deepEqual((await choicesOf(p, id)).map((c) => c.card), [Number(card)], "one choice was recorded");

    // The next choice reaches the server, but its answer is lost on the way back: the page
    // keeps it as waiting and resends it with the same key; the server answers with the
    // first answer and records nothing twice.
    const other = await p.locator(".hand-cards button:not([aria-pressed=true])").first().getAttribute("data-card");
    me.allow(/ERR_CONNECTION_RESET/);
    let cut = 0;
    await p.route(`**/v1/games/${id}/commands`, async (route) => {
      if (cut++ === 0) {
        await route.fetch();
        await route.abort("connectionreset");
      } else await route.continue();
    });
    await p.locator(`.hand-cards button[data-card='${other}']`).click();
    await p.locator("[data-pending-move=play_card]").waitFor();
    await until(async () => (await p.locator("[data-pending-move]").count()) === 0, 20_000, "the resend");
    assert.equal(cut, 2, "the move was sent twice");
    await p.unroute(`**/v1/games/${id}/commands`);
    assert.deepEqual(
      (await choicesOf(p, id)).map((c) => c.card),
      [Number(card), Number(other)],
      "the lost answer's choice was recorded once, not twice",
    );
    assert.equal((await rudi.view(id)).seats[1].selected, true);
    me.assertClean();
    await me.context.close();
  });

  test("a waiting move the game moved on from is not sent, and the person is told", async () => {
    const me = await person(browser, { viewport: PHONE });
    const p = me.page;
    await p.goto(server.base + "/");
    await signInAsGuest(p, "greta");
    const hugo = await host("hugo");
    const id = await seatedGame(p, hugo, { move_deadline_seconds: 60 });
    await p.locator("[data-connection=live]").waitFor();
    const hugoCard = (await hugo.view(id)).you.hand[0];
    await hugo.command(id, { type: "play_card", card: hugoCard });

    await p.context().setOffline(true);
    me.allow(/request failed|Failed to fetch|ERR_INTERNET_DISCONNECTED|HTTP 409|status of 409/);
    await p.locator(".hand-cards button").first().click();
    await p.locator("[data-pending-move=play_card]").waitFor();
    // Her deadline passes while she is away: the server moves for her and the turn resolves.
    const res = await fetch(`${server.base}/test/clock`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ advance_seconds: 61 }),
    });
    assert.equal(res.status, 200);
    await until(async () => (await hugo.view(id)).seats[1].hand_size === 9, 20_000, "the deadline's move");
    await p.context().setOffline(false);
    await p.locator("[data-dropped-move=play_card]").waitFor({ timeout: 20_000 });
    assert.match(await p.locator("[data-dropped-move]").textContent(), /was not made: the game moved on while you were offline/);
    // (The table settles first: a card caught mid-animation is faded.)
    await until(async () => (await p.locator("button.skip").count()) === 0, 15_000, "the table settled");
    await p.screenshot({ path: join(OUT, "93-offline-move-dropped-phone.png") });
    await assertAccessible(p, "a dropped move");
    assert.equal(await p.locator("[data-pending-move]").count(), 0);
    assert.deepEqual(
      (await choicesOf(p, id)).map((c) => c.cause ?? "person"),
      ["deadline"],
      "only the deadline's choice was recorded for her",
    );
    me.assertClean();
    await me.context.close();
  });

  test("notifications: asked for only on a click; choices saved; a push delivered to the service worker shows a notification whose click opens the game", async () => {
    const me = await person(browser, { viewport: PHONE });
    const p = me.page;
    await p.goto(server.base + "/");
    await signInAsGuest(p, "nina");
    const otto = await host("otto");
    const id = await seatedGame(p, otto);
    await workerActive(p);

    // The account page offers notifications, but asks the browser nothing by itself.
    await p.goto(server.base + "/#/account");
    await p.locator("#push-h").waitFor();
    await p.locator("#push-turn").waitFor();
    assert.equal(await p.evaluate(() => Notification.permission), "default", "no permission was asked on load");
    assert.equal(await p.locator("[data-push-here]").getAttribute("data-push-here"), "off");
    // The choices are kept by the server (for every device of the account).
    await p.locator("#push-finished").uncheck();
    await p.locator("#push-hours").fill("6");
    await p.locator(".push-choices button[type=submit]").click();
    await p.locator(".push-choices [role=status]", { hasText: "Saved" }).waitFor();
    await p.reload();
    await p.locator("#push-turn").waitFor();
    assert.equal(await p.locator("#push-finished").isChecked(), false);
    assert.equal(await p.locator("#push-hours").inputValue(), "6");
    await p.screenshot({ path: join(OUT, "94-notifications-account-phone.png"), fullPage: true });
    await assertAccessible(p, "the account page's notifications");

    // A click turns them on: only now does the browser ask (the test's browser says yes).
    // Headless Chromium has no push service to subscribe with, so the page says so plainly.
    // (A test's browser context counts as incognito, where Chrome logs that it has no Push API.)
    me.allow(/does not support the Push API in incognito mode/);
    await p.context().grantPermissions(["notifications"], { origin: server.base });
    await p.locator("[data-push=on]").click();
    await p.locator("[data-push-note]").waitFor();
    assert.match(await p.locator("[data-push-note]").textContent(), /could not subscribe to notifications here/);

    // A push message, as the server sends it (public facts only), delivered to the service
    // worker through the DevTools protocol: it shows a notification.
    const cdp = await p.context().newCDPSession(p);
    const registration = new Promise((resolve) => {
      cdp.on("ServiceWorker.workerRegistrationUpdated", (e) => {
        const r = e.registrations.find((x) => x.scopeURL === `${server.base}/` && !x.isDeleted);
        if (r) resolve(r.registrationId);
      });
    });
    await cdp.send("ServiceWorker.enable");
    const registrationId = await registration;
    const message = { kind: "your_turn", title: "Your turn", body: "6 nimmt!: choose a card", url: `#/games/${id}`, tag: "your-turn", game_id: id, ruleset: "6-nimmt" };
    await cdp.send("ServiceWorker.deliverPushMessage", { origin: server.base, registrationId, data: JSON.stringify(message) });
    const shown = () => p.evaluate(async () => (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => `${n.title}|${n.body}`));
    await until(async () => (await shown()).includes("Your turn|6 nimmt!: choose a card"), 10_000, "the notification");
    // Its click (the worker's click path, asked for by the page: a test cannot click a
    // system notification) opens the game in the open window, and the notification goes.
    await p.evaluate((tag) => navigator.serviceWorker.controller.postMessage({ type: "click-notification", tag }), "your-turn");
    await p.waitForURL(new RegExp(`#/games/${id}$`));
    await p.locator(".hand-cards button").first().waitFor();
    assert.deepEqual(await shown(), [], "the clicked notification is closed");
    me.assertClean();
    await me.context.close();
  });
});
