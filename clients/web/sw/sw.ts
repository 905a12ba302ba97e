// The service worker: the app's shell (the page, its hashed script and stylesheet, the
// manifest and icons) is kept in a cache named after the build, so the client opens at once
// and offline. A new build is a new sw.js (the build writes its files' hashes into it): it
// fills its own cache, takes over, and drops the old one. Only the shell is served from the
// cache: the API, the docs and everything else go to the network untouched, so no answer
// about a game or an account is ever stored here.
// A module, so that `self` can be declared as the service worker's scope.
export {};
declare const self: ServiceWorkerGlobalScope;
/** The shell's URLs relative to the worker (injected by build.mjs). */
declare const SHELL: string[];
/** The build's identity (injected by build.mjs). */
declare const BUILD: string;

const CACHE = `stammtisch-shell-${BUILD}`;
const scope = new URL("./", self.location.href);
const shell = new Set(SHELL.map((u) => new URL(u, scope).href));

self.addEventListener("install", (e) => {
  e.waitUntil(
    caches
      .open(CACHE)
      .then((c) => c.addAll([...shell]))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (e) => {
  e.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith("stammtisch-shell-") && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (e) => {
  const req = e.request;
  if (req.method !== "GET") return;
  const url = new URL(req.url);
  if (url.origin !== scope.origin) return;
  // Opening the app (any #/route is the same page): the cached page at once; the network
  // only when the cache has none.
  if (req.mode === "navigate" && (url.pathname === scope.pathname || url.pathname === `${scope.pathname}index.html`)) {
    e.respondWith(caches.match(scope.href, { cacheName: CACHE }).then((hit) => hit ?? fetch(req)));
    return;
  }
  if (shell.has(url.href)) {
    e.respondWith(caches.match(url.href, { cacheName: CACHE }).then((hit) => hit ?? fetch(req)));
  }
});

// --- notifications ----------------------------------------------------------------------

/** What the server's push message holds (public facts only: never a card, chip or seed). */
interface PushPayload {
  title?: string;
  body?: string;
  /** Where a click leads, relative to the app (`#/games/<id>`). */
  url?: string;
  /** Notifications with the same tag replace each other instead of piling up. */
  tag?: string;
}

self.addEventListener("push", (e) => {
  let data: PushPayload = {};
  try {
    data = (e.data?.json() ?? {}) as PushPayload;
  } catch {
    data = { body: e.data?.text() };
  }
  e.waitUntil(
    self.registration.showNotification(data.title ?? "Stammtisch", {
      body: data.body ?? "",
      tag: data.tag ?? "stammtisch",
      icon: new URL("icons/icon-192.png", scope).href,
      data: { url: new URL(data.url ?? "./", scope).href },
    }),
  );
});

/** Opens `url` in a window of the app: an open one (which follows the link itself), or a new one. */
async function openApp(url: string): Promise<void> {
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const open = windows.find((w) => new URL(w.url).origin === scope.origin);
  if (open) {
    await open.focus().catch(() => undefined);
    open.postMessage({ type: "open", url });
    return;
  }
  await self.clients.openWindow(url);
}

function clicked(n: Notification): Promise<void> {
  n.close();
  const url = (n.data as { url?: string } | null)?.url ?? scope.href;
  return openApp(url);
}

self.addEventListener("notificationclick", (e) => {
  e.waitUntil(clicked(e.notification));
});

// A page may ask the worker to act as if the person clicked its notification with this tag:
// the same path as a click (browsers have no other way to click one in an automated test).
self.addEventListener("message", (e) => {
  const msg = e.data as { type?: string; tag?: string } | null;
  if (msg?.type !== "click-notification") return;
  e.waitUntil(
    self.registration.getNotifications({ tag: msg.tag }).then(async (list) => {
      for (const n of list) await clicked(n);
    }),
  );
});
