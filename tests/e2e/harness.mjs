// The e2e tests' kit: the real server binary on a fresh SQLite file, Debian's Chromium
// through playwright-core, pages that fail the test on any console error, failed request or
// Content-Security-Policy violation, screenshots at phone and desktop size, a static server
// for a second origin (with a policy like the server's), and a few direct API calls for the
// second player of a scripted deal.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { chromium } from "playwright-core";

export const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const OUT = resolve(process.env.E2E_OUT ?? join(ROOT, "target", "e2e"));
const BIN = process.env.STAMMTISCH_BIN ?? join(ROOT, "target", "debug", "stammtisch");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

export const PHONE = { width: 375, height: 812 };
export const DESKTOP = { width: 1280, height: 900 };

/** A port that was free a moment ago (for a server restarted on the same address). */
export async function freePort() {
  const s = http.createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * Starts the server on a fresh SQLite file (or the one in `dir`, on `port`, to restart it);
 * resolves with its base URL and a stop() that also deletes a directory it made.
 */
export async function startServer({ corsOrigins = "", dir: given, port = 0, env = {} } = {}) {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run cargo build first`);
  const dir = given ?? (await mkdtemp(join(tmpdir(), "stammtisch-e2e-")));
  const child = spawn(BIN, ["serve"], {
    env: {
      ...process.env,
      DATABASE_URL: `sqlite://${join(dir, "e2e.db")}`,
      BIND_ADDR: `127.0.0.1:${port}`,
      CORS_ORIGINS: corsOrigins,
      RUST_LOG: process.env.RUST_LOG ?? "warn",
      STREAM_POLL_MS: "500",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const base = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`the server did not start:\n${log}`)), 30_000);
    const read = (chunk) => {
      log += chunk.toString();
      const m = /listening on (http:\/\/[0-9.:]+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("exit", (code) => fail(new Error(`the server exited (${code}):\n${log}`)));
  });
  return {
    base,
    dir,
    log: () => log,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)));
      if (!given) await rm(dir, { recursive: true, force: true });
    },
  };
}

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".webmanifest": "application/manifest+json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/** The page's policy for a copy of the client whose API is at `apiBase` (another origin). */
export function crossOriginPolicy(apiBase) {
  return (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
    `connect-src 'self' ${apiBase}; font-src 'self'; object-src 'none'; base-uri 'none'; ` +
    "form-action 'self'; frame-ancestors 'none'"
  );
}

/**
 * Serves clients/web/dist from its own origin, with index.html pointed at `apiBase`
 * (`<meta name="stammtisch-api">`), as a separately hosted frontend would be.
 */
export async function startStaticServer() {
  const dist = join(ROOT, "clients", "web", "dist");
  let apiBase = "";
  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const file = path === "/" ? "index.html" : path.replace(/^\/+/, "");
    if (file.includes("..")) {
      res.writeHead(400).end();
      return;
    }
    try {
      let body = await readFile(join(dist, file));
      if (file === "index.html") {
        body = Buffer.from(
          body.toString("utf8").replace('<meta name="stammtisch-api" content="">', `<meta name="stammtisch-api" content="${apiBase}">`),
        );
      }
      res.writeHead(200, {
        "content-type": TYPES[extname(file)] ?? "application/octet-stream",
        // The server's own policy, with the API's origin to connect to.
        "content-security-policy": crossOriginPolicy(apiBase),
      });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return {
    origin: `http://127.0.0.1:${port}`,
    setApi(base) {
      apiBase = base;
    },
    stop: () => new Promise((r) => server.close(r)),
  };
}

export async function launch() {
  // A browser that dies while starting (a busy shared machine) gets one more start; a test
  // itself is never retried.
  try {
    return await startChromium();
  } catch (e) {
    console.error(`Chromium did not start (${String(e).split("\n")[0]}); starting it once more`);
    return startChromium();
  }
}

function startChromium() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/**
 * A new page in its own browser context (its own person) that records every console error,
 * page error, failed request and HTTP error answer. `allow` lists patterns a test expects.
 */
export async function person(browser, { viewport = DESKTOP, locale = "en-US", speed = "fast" } = {}) {
  const context = await browser.newContext({ viewport, locale });
  await context.addInitScript((s) => {
    if (!localStorage.getItem("stammtisch.speed")) localStorage.setItem("stammtisch.speed", s);
  }, speed);
  // Anything the page's Content-Security-Policy refuses fails the test (as a console error).
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || "(inline)"} at ${e.sourceFile}:${e.lineNumber}`);
    });
  });
  const page = await context.newPage();
  const problems = [];
  const allowed = [];
  const seen = [];
  const isAllowed = (text) => {
    const hit = allowed.some((re) => re.test(text));
    if (hit) seen.push(text);
    return hit;
  };
  page.on("console", (m) => {
    if (m.type() === "error" && !isAllowed(m.text())) problems.push(`console error: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => {
    const why = r.failure()?.errorText ?? "";
    // A request the page itself cancels (closing a stream, leaving a page) is not a failure.
    if (why.includes("ERR_ABORTED")) return;
    const text = `request failed: ${r.method()} ${r.url()} ${why}`;
    if (!isAllowed(text)) problems.push(text);
  });
  page.on("response", (r) => {
    if (r.status() >= 400) {
      const text = `HTTP ${r.status()}: ${r.request().method()} ${r.url()}`;
      if (!isAllowed(text)) problems.push(text);
    }
  });
  return {
    page,
    context,
    problems,
    /** The expected messages that did occur. */
    seen,
    /** Expect messages like these (a test that provokes an error on purpose). */
    allow(re) {
      allowed.push(re);
    },
    /** Fails when anything went wrong in this page. */
    assertClean() {
      if (problems.length > 0) throw new Error(`the page reported problems:\n  ${problems.join("\n  ")}`);
    },
  };
}

/** Screenshots of the page at phone and desktop size: OUT/<name>-phone.png, -desktop.png (full pages), and -phone-screen.png (the phone's screen). */
export async function shoot(page, name) {
  await mkdir(OUT, { recursive: true });
  const before = page.viewportSize();
  for (const [label, size] of [
    ["phone", PHONE],
    ["desktop", DESKTOP],
  ]) {
    await page.setViewportSize(size);
    await page.waitForTimeout(100);
    await page.screenshot({ path: join(OUT, `${name}-${label}.png`), fullPage: true });
    // On a phone the hand is docked to the screen's bottom, which a full-page picture shows
    // mid-page: the screen as the person sees it, too.
    if (label === "phone") await page.screenshot({ path: join(OUT, `${name}-${label}-screen.png`) });
  }
  if (before) await page.setViewportSize(before);
}

/** Signs in as a guest through the sign-in form. */
export async function signInAsGuest(page, name) {
  await page.locator("#guest-name").fill(name);
  await page.locator("form:has(#guest-name) button[type=submit]").click();
  await page.locator("[data-account]").waitFor();
}

/** A tiny API client for a second player driven without a browser. */
export function apiClient(base) {
  let token = null;
  const call = async (method, path, body) => {
    const res = await fetch(base + path, {
      method,
      headers: {
        "content-type": "application/json",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : null;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return json;
  };
  return {
    async guest(name) {
      const g = await call("POST", "/v1/guests", { name });
      token = g.access_token;
      return g;
    },
    view: (id) => call("GET", `/v1/games/${id}`),
    create: (body) => call("POST", "/v1/games", body),
    command: (id, cmd) => call("POST", `/v1/games/${id}/commands`, cmd),
  };
}

/** Polls `f` until it returns a truthy value (or throws after `ms`). */
export async function until(f, ms = 30_000, what = "condition") {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/**
 * Makes one move for the person on `page` if the table asks one of them: take a row, keep
 * a card, take or pass, or choose a card (the first enabled one) when none is chosen yet.
 * Returns true when it clicked something.
 */
export async function moveIfAsked(page, { nos = "random" } = {}) {
  const click = async (sel) => {
    const el = page.locator(sel).first();
    if ((await el.count()) === 0 || !(await el.isEnabled().catch(() => false))) return false;
    await el.click({ timeout: 2000 }).catch(() => undefined);
    return true;
  };
  if (await click("button.take-row:enabled")) return true;
  if (await click("button[data-keep]:enabled")) return true;
  const take = page.locator(".nos-actions button.primary:enabled");
  if ((await take.count()) > 0) {
    const pass = page.locator(".nos-actions button:not(.primary):enabled");
    const choosePass = (await pass.count()) > 0 && (nos === "pass" || (nos === "random" && Math.random() < 0.5));
    await (choosePass ? pass : take).first().click({ timeout: 2000 }).catch(() => undefined);
    return true;
  }
  const yourTurn = (await page.locator(".status[data-your-turn=true]").count()) > 0;
  const chosen = (await page.locator(".hand-cards button[aria-pressed=true]").count()) > 0;
  if (yourTurn && !chosen) return click(".hand-cards button:enabled");
  return false;
}

export const isFinished = async (page) => (await page.locator(".game[data-status=finished]").count()) > 0;

/**
 * Fails when a control on the page has no name a screen reader could read: every button and
 * link needs text or a label, every form field a <label> or an aria label.
 */
const axeSource = await readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * Runs axe-core on the page as it is now and fails on any serious or critical violation
 * (WCAG 2.x A and AA rules). The script goes in through the DevTools protocol, which the
 * page's Content-Security-Policy does not govern; the page itself loads nothing new.
 */
export async function assertAccessible(page, what = page.url()) {
  // A card's drop animation fades it in (opacity 0.3 → 1 over 0.5 s): axe would measure the
  // contrast of its number mid-fade. Wait until no animation runs (bounded; polled from
  // here, since a page with Playwright's fake clock may not advance its own timers).
  const until = Date.now() + 5_000;
  while (
    Date.now() < until &&
    (await page.evaluate(() => document.getAnimations().filter((a) => a.playState === "running").length)) > 0
  ) {
    await new Promise((r) => setTimeout(r, 50));
  }
  await page.evaluate(`${axeSource}\n;0`);
  const violations = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const result = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).slice(0, 5).join(", ")}`);
  });
  if (violations.length > 0) throw new Error(`axe-core on ${what}:\n  ${violations.join("\n  ")}`);
}

export async function assertLabelled(page) {
  const unnamed = await page.evaluate(() => {
    const visible = (el) => el.getClientRects().length > 0;
    const name = (el) =>
      (el.getAttribute("aria-label") ?? "").trim() ||
      (el.getAttribute("aria-labelledby") ?? "").trim() ||
      (el.textContent ?? "").trim() ||
      [...el.querySelectorAll("[aria-label]")].map((c) => c.getAttribute("aria-label")).join("").trim();
    const out = [];
    for (const el of document.querySelectorAll("button, a[href]")) {
      if (visible(el) && !name(el)) out.push(el.outerHTML.slice(0, 120));
    }
    for (const el of document.querySelectorAll("input, select, textarea")) {
      if (!visible(el) || el.type === "hidden") continue;
      const labelled = (el.labels && el.labels.length > 0) || el.getAttribute("aria-label") || el.getAttribute("aria-labelledby");
      if (!labelled) out.push(el.outerHTML.slice(0, 120));
    }
    return out;
  });
  if (unnamed.length > 0) throw new Error(`controls without an accessible name:\n  ${unnamed.join("\n  ")}`);
  await assertAccessible(page);
}

/**
 * A small SMTP sink on 127.0.0.1 speaking just enough SMTP for the server's mailer (no
 * TLS): every accepted mail's recipients and body (quoted-printable decoded) are kept.
 */
export async function startSmtpSink() {
  const mails = [];
  const server = net.createServer((socket) => {
    socket.setEncoding("latin1");
    let buffer = "";
    let to = [];
    let data = null;
    socket.write("220 sink ESMTP\r\n");
    socket.on("data", (chunk) => {
      buffer += chunk;
      for (;;) {
        const end = buffer.indexOf("\r\n");
        if (end < 0) return;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (data !== null) {
          if (line === ".") {
            const raw = data.join("\n");
            const split = raw.indexOf("\n\n");
            const headers = split < 0 ? raw : raw.slice(0, split);
            let body = split < 0 ? "" : raw.slice(split + 2);
            if (/Content-Transfer-Encoding: quoted-printable/i.test(headers)) {
              body = Buffer.from(
                body.replace(/=\n/g, "").replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16))),
                "latin1",
              ).toString("utf8");
            }
            mails.push({ to, headers, body });
            data = null;
            socket.write("250 ok\r\n");
          } else {
            data.push(line.startsWith(".") ? line.slice(1) : line);
          }
          continue;
        }
        const upper = line.toUpperCase();
        if (upper.startsWith("EHLO") || upper.startsWith("HELO")) socket.write("250-sink\r\n250 8BITMIME\r\n");
        else if (upper.startsWith("MAIL FROM")) {
          to = [];
          socket.write("250 ok\r\n");
        } else if (upper.startsWith("RCPT TO")) {
          to.push(line.slice(line.indexOf(":") + 1).trim().replace(/^<|>$/g, ""));
          socket.write("250 ok\r\n");
        } else if (upper === "DATA") {
          data = [];
          socket.write("354 go on\r\n");
        } else if (upper === "QUIT") {
          socket.end("221 bye\r\n");
        } else socket.write("250 ok\r\n");
      }
    });
    socket.on("error", () => undefined);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return {
    url: `smtp://127.0.0.1:${port}`,
    /** The mails to `address` so far. */
    to: (address) => mails.filter((m) => m.to.includes(address)),
    stop: () => new Promise((r) => server.close(r)),
  };
}
