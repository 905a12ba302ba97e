// Guest sign-in, log in and registration; for an invite link, what it invites to first.
import { useState } from "preact/hooks";
import { api, signOutReason, startSession, unwrap } from "../api";
import { t } from "../i18n";
import { route } from "../router";
import { useStore } from "../store";
import { ErrorMessage, Field, InputHint, passwordLengthOk, useAction } from "../ui";
import { InviteNote, inviteOf } from "./join";

const NAME = /^[A-Za-z0-9_-]{3,32}$/;

export function SignIn() {
  const reason = useStore(signOutReason);
  // An invite link opened while signed out: say who invites to which game first.
  const invite = inviteOf(useStore(route));
  // A suggested name, so that a guest can start with one click (a valid name: letters,
  // a hyphen and four digits).
  const [guestName, setGuestName] = useState(() => `${t("guestPrefix")}-${1000 + Math.floor(Math.random() * 9000)}`);
  const [mode, setMode] = useState<"login" | "register">("login");
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [runGuest, guestBusy, guestError] = useAction();
  const [runAccount, accountBusy, accountError] = useAction();
  const [guestHint, setGuestHint] = useState<string | null>(null);
  const [accountHint, setAccountHint] = useState<string | null>(null);

  const guest = (e: Event) => {
    e.preventDefault();
    if (!NAME.test(guestName)) {
      setGuestHint(t("badName"));
      return;
    }
    setGuestHint(null);
    void runGuest(async () => {
      const g = await unwrap(api.POST("/v1/guests", { body: { name: guestName } }));
      startSession(g.access_token, g.expires_in, g.account);
    });
  };

  const account = (e: Event) => {
    e.preventDefault();
    if (mode === "register" && !NAME.test(name)) {
      setAccountHint(t("badName"));
      return;
    }
    if (mode === "register" && !passwordLengthOk(password)) {
      setAccountHint(t("badPassword"));
      return;
    }
    setAccountHint(null);
    void runAccount(async () => {
      if (mode === "register") {
        await unwrap(api.POST("/v1/accounts", { body: { name, password } }));
      }
      const tok = await unwrap(api.POST("/v1/tokens", { body: { name, password } }));
      const me = await unwrap(
        api.GET("/v1/me", { headers: { Authorization: `Bearer ${tok.access_token}` } }),
      );
      startSession(tok.access_token, tok.expires_in, me);
    });
  };

  return (
    <div class="signin">
      <h1 tabIndex={-1}>{t("appName")}</h1>
      <p class="lead">{t("welcome")}</p>
      {reason ? (
        <p class="notice" role="status">
          {reason}
        </p>
      ) : null}
      {invite ? <InviteNote key={invite.code} id={invite.id} code={invite.code} /> : null}
      <div class="cols">
        <section class="panel" aria-labelledby="guest-h">
          <h2 id="guest-h">{t("guestTitle")}</h2>
          <p>{t("guestHint")}</p>
          <form onSubmit={guest} noValidate>
            <Field id="guest-name" label={t("name")} hint={t("nameHint")}>
              <input
                id="guest-name"
                name="guest-name"
                autocomplete="nickname"
                value={guestName}
                aria-describedby="guest-name-hint"
                aria-invalid={guestHint ? "true" : undefined}
                onInput={(e) => setGuestName(e.currentTarget.value)}
                required
              />
            </Field>
            <InputHint text={guestHint} />
            <ErrorMessage error={guestError} />
            <button type="submit" class="primary" disabled={guestBusy}>
              {t("playAsGuest")}
            </button>
          </form>
        </section>
        <section class="panel" aria-labelledby="account-h">
          <h2 id="account-h">{t("accountTitle")}</h2>
          <div class="toggle" role="group" aria-label={t("accountTitle")}>
            <button type="button" aria-pressed={mode === "login"} onClick={() => setMode("login")}>
              {t("haveAccount")}
            </button>
            <button type="button" aria-pressed={mode === "register"} onClick={() => setMode("register")}>
              {t("newAccount")}
            </button>
          </div>
          <form onSubmit={account} noValidate>
            <Field id="acc-name" label={t("name")} hint={mode === "register" ? t("nameHint") : undefined}>
              <input
                id="acc-name"
                name="username"
                autocomplete="username"
                value={name}
                onInput={(e) => setName(e.currentTarget.value)}
                required
              />
            </Field>
            <Field id="acc-pw" label={t("password")} hint={mode === "register" ? t("passwordHint") : undefined}>
              <input
                id="acc-pw"
                name="password"
                type="password"
                autocomplete={mode === "register" ? "new-password" : "current-password"}
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
                required
              />
            </Field>
            <InputHint text={accountHint} />
            <ErrorMessage error={accountError} />
            <button type="submit" class="primary" disabled={accountBusy}>
              {mode === "register" ? t("register") : t("logIn")}
            </button>
          </form>
        </section>
      </div>
    </div>
  );
}
