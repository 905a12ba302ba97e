// The app shell: header with navigation (and the account page), language switch and account; the page of the
// current hash route; sign-in first when nobody is signed in (the rules pages excepted: anyone may read them;
// and the mailed link's confirmation page: its token says whose address it is).
import { render } from "preact";
import { useEffect } from "preact/hooks";
import { session, signOut } from "./api";
import { lang, t, type Lang } from "./i18n";
import { AccountPage } from "./pages/account";
import { CalculatorPage } from "./pages/calculator";
import { GamePage } from "./pages/game";
import { JoinPage } from "./pages/join";
import { Lobby } from "./pages/lobby";
import { PadPage, PadsPage } from "./pages/pads";
import { LeaderboardPage, PlayerPage } from "./pages/players";
import { RulesPage } from "./pages/rules";
import { VerifyMailPage } from "./pages/verifymail";
import { SignIn } from "./pages/signin";
import { NewTournamentPage, TournamentPage, TournamentsPage } from "./pages/tournaments";
import { href, route, type Route } from "./router";
import { useStore } from "./store";
import { Select } from "./ui";

function Page(props: { r: Route }) {
  const r = props.r;
  switch (r.page) {
    case "lobby":
      return <Lobby />;
    case "game":
      return <GamePage key={r.id} id={r.id} />;
    case "join":
      return <JoinPage id={r.id} code={r.code} />;
    case "invite":
      return <JoinPage id={null} code={r.code} />;
    case "pads":
      return <PadsPage />;
    case "pad":
      return <PadPage key={r.id} id={r.id} />;
    case "calculator":
      return <CalculatorPage />;
    case "leaderboard":
      return <LeaderboardPage ruleset={r.ruleset} />;
    case "player":
      return <PlayerPage key={r.id} id={r.id} />;
    case "account":
      return <AccountPage />;
    case "tournaments":
      return <TournamentsPage />;
    case "tournament-new":
      return <NewTournamentPage />;
    case "tournament":
      return <TournamentPage key={`${r.id}?${r.code ?? ""}`} id={r.id} code={r.code} />;
    case "rules":
      return <RulesPage ruleset={r.ruleset} preset={r.preset} />;
    case "verify-mail":
      return <VerifyMailPage token={r.token} />;
    default:
      return (
        <div>
          <h1 tabIndex={-1}>{t("notFoundPage")}</h1>
          <p>
            <a href="#/">{t("toLobby")}</a>
          </p>
        </div>
      );
  }
}

function App() {
  const s = useStore(session);
  const r = useStore(route);
  const l = useStore(lang);
  // Move focus to the new page's heading, so keyboard and screen-reader users land there.
  useEffect(() => {
    const h = document.querySelector<HTMLElement>("main h1");
    if (h && document.activeElement !== h) h.focus({ preventScroll: true });
  }, [r, s === null]);
  // The tab's title names the page (for tabs, history and screen readers), following the
  // page's heading as it loads and changes.
  useEffect(() => {
    const main = document.getElementById("main");
    if (!main) return;
    const update = () => {
      const h = main.querySelector("h1")?.textContent?.trim();
      const page = h && h !== t("appName") ? `${h} – ${t("appName")}` : t("appName");
      // A table waiting for this person says so in the tab, to be seen from another tab.
      const turn = main.querySelector('[data-your-turn="true"]') !== null;
      const title = turn ? `▶ ${t("yourTurnTitle")} · ${page}` : page;
      if (document.title !== title) document.title = title;
    };
    const watch = new MutationObserver(update);
    watch.observe(main, {
      subtree: true,
      childList: true,
      characterData: true,
      attributes: true,
      attributeFilter: ["data-your-turn"],
    });
    update();
    return () => watch.disconnect();
  }, []);
  const current = (page: string) =>
    r.page === page || (page === "pads" && r.page === "pad") || (page === "tournaments" && r.page.startsWith("tournament"))
      ? "page"
      : undefined;
  const mine = s !== null && r.page === "player" && r.id === s.account.id ? "page" : undefined;
  return (
    <>
      <a class="skip-link" href="#main" onClick={(e) => {
        e.preventDefault();
        document.getElementById("main")?.focus();
      }}>
        {t("skipToContent")}
      </a>
      <header class="top">
        <a class="brand" href="#/">
          {t("appName")}
        </a>
        {s ? (
          <nav aria-label={t("appName")}>
            <a href="#/" aria-current={current("lobby")}>
              {t("navLobby")}
            </a>
            <a href="#/tournaments" aria-current={current("tournaments")}>
              {t("navTournaments")}
            </a>
            <a href="#/pads" aria-current={current("pads")}>
              {t("navPads")}
            </a>
            <a href="#/calculator" aria-current={current("calculator")}>
              {t("navCalculator")}
            </a>
            <a href="#/leaderboard" aria-current={current("leaderboard")}>
              {t("navLeaderboard")}
            </a>
            <a href={href("players", s.account.id)} aria-current={mine}>
              {t("navProfile")}
            </a>
            <a href="#/account" aria-current={current("account")}>
              {t("navAccount")}
            </a>
            <a href="#/rules" aria-current={current("rules")}>
              {t("navRules")}
            </a>
          </nav>
        ) : null}
        <div class="account">
          <label for="lang" class="visually-hidden">
            {t("language")}
          </label>
          <Select<Lang>
            id="lang"
            value={l}
            onChange={(v) => lang.set(v)}
            options={[
              { value: "de", label: "Deutsch" },
              { value: "en", label: "English" },
            ]}
          />
          {s ? (
            <>
              <span class="who" data-account={s.account.name}>
                <span class="who-prefix">{t("signedInPrefix")} </span>
                <span class="who-name">{s.account.name}</span>
                {s.account.guest ? ` (${t("guestMark")})` : ""}
              </span>
              <button type="button" class="link" onClick={() => signOut()}>
                {t("signOut")}
              </button>
            </>
          ) : null}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {s || r.page === "rules" || r.page === "verify-mail" ? <Page r={r} /> : <SignIn />}
      </main>
    </>
  );
}

// The service worker keeps the app's shell for opening at once and offline (a secure origin
// only: https, or this machine). Without it the app works as before.
if ("serviceWorker" in navigator && window.isSecureContext) {
  navigator.serviceWorker.register("sw.js").catch(() => undefined);
  // A notification clicked while the app is open: the worker hands over where it leads.
  navigator.serviceWorker.addEventListener("message", (e: MessageEvent<{ type?: string; url?: string }>) => {
    if (e.data?.type !== "open" || !e.data.url) return;
    const to = new URL(e.data.url, location.href);
    if (to.origin === location.origin) location.hash = to.hash;
  });
}

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
