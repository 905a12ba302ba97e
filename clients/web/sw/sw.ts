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
