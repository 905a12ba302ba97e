// The account page: a guest registers to keep their games; a registered person changes
// their password; e-mail reminders (address and choices); notifications on this device (Web
// Push) and their choices; log out everywhere; deletion.
// The session itself lives in api.ts.
import type { RefObject } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { components } from "../../../typescript/src/index.ts";
import {
  api,
  onMailVerified,
  renewToken,
  session,
  signOut,
  startSession,
  unwrap,
  type Session,
} from "../api";
import { dateTime, lang, t } from "../i18n";
import { useStore } from "../store";
import { getVacation, hoursText, localInput, setAway, type Vacation } from "../clocks";
import { ErrorMessage, Field, InputHint, passwordLengthOk, useAction } from "../ui";

type MailSettings = components["schemas"]["MailSettings"];
type PushSettings = components["schemas"]["PushSettings"];

const NAME = /^[A-Za-z0-9_-]{3,32}$/;

export function AccountPage() {
  const s = useStore(session);
  const [done, setDone] = useState<string | null>(null);
  if (!s) return null;
  const a = s.account;
  return (
    <div class="account-page">
      <h1 tabIndex={-1}>{t("accountPageTitle")}</h1>
      <p class="meta" data-account-kind={a.guest ? "guest" : "registered"}>
        {a.guest ? t("accountGuestSummary", { name: a.name }) : t("accountRegisteredSummary", { name: a.name })}{" "}
        {t("memberSince", { date: dateTime(a.created_at) })}
      </p>
      <Done text={done} />
      <div class="cols">
        <div>
          {a.guest ? <Register s={s} onDone={() => setDone(t("registered"))} /> : <ChangePassword />}
          <Mail />
          <Push />
        </div>
        <div>
          <VacationPanel guest={a.guest} />
          <LogoutEverywhere guest={a.guest} />
          <DeleteAccount guest={a.guest} />
        </div>
      </div>
    </div>
  );
}

/**
 * A question asked before a step that cannot be undone: keyboard focus moves to the first
 * control of the question when it opens, and back to the button that asked when it closes.
 */
function useAsking(): [boolean, (v: boolean) => void, RefObject<HTMLButtonElement | null>, RefObject<HTMLElement | null>] {
  const [asking, setAsking] = useState(false);
  const ask = useRef<HTMLButtonElement>(null);
  const first = useRef<HTMLElement>(null);
  const opened = useRef(false);
  useEffect(() => {
    if (asking) first.current?.focus();
    else if (opened.current) ask.current?.focus();
    opened.current = asking;
  }, [asking]);
  return [asking, setAsking, ask, first];
}

/** A short confirmation read out by screen readers. */
function Done(props: { text: string | null }) {
  return (
    <p role="status" class="done">
      {props.text ?? ""}
    </p>
  );
}

function Register(props: { s: Session; onDone: () => void }) {
  const [name, setName] = useState(props.s.account.name);
  const [password, setPassword] = useState("");
  const [hint, setHint] = useState<string | null>(null);
  const [run, busy, error] = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    if (!NAME.test(name)) return setHint(t("badName"));
    if (!passwordLengthOk(password)) return setHint(t("badPassword"));
    setHint(null);
    void run(async () => {
      const body = name === props.s.account.name ? { password } : { name, password };
      const r = await unwrap(api.POST("/v1/me/register", { body }));
      startSession(r.access_token, r.expires_in, r.account);
      props.onDone();
    });
  };
  return (
    <section class="panel register-prompt" aria-labelledby="register-h">
      <h2 id="register-h">{t("registerPromptTitle")}</h2>
      <p>{t("registerPromptText")}</p>
      <form onSubmit={submit} noValidate>
        <Field id="reg-name" label={t("name")} hint={t("registerNameHint")}>
          <input
            id="reg-name"
            name="username"
            autocomplete="username"
            value={name}
            aria-describedby="reg-name-hint"
            onInput={(e) => setName(e.currentTarget.value)}
            required
          />
        </Field>
        <Field id="reg-pw" label={t("password")} hint={t("passwordHint")}>
          <input
            id="reg-pw"
            name="password"
            type="password"
            autocomplete="new-password"
            value={password}
            aria-describedby="reg-pw-hint"
            onInput={(e) => setPassword(e.currentTarget.value)}
            required
          />
        </Field>
        <InputHint text={hint} />
        <ErrorMessage error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {t("registerKeep")}
        </button>
      </form>
    </section>
  );
}

function ChangePassword() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [hint, setHint] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [run, busy, error] = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setDone(null);
    if (!passwordLengthOk(next)) return setHint(t("badPassword"));
    setHint(null);
    void run(async () => {
      const tok = await unwrap(
        api.POST("/v1/me/password", { body: { current_password: current, new_password: next } }),
      );
      renewToken(tok.access_token, tok.expires_in);
      setCurrent("");
      setNext("");
      setDone(t("passwordChanged"));
    });
  };
  return (
    <section class="panel" aria-labelledby="pw-h">
      <h2 id="pw-h">{t("changePasswordTitle")}</h2>
      <form onSubmit={submit} noValidate>
        <Field id="pw-current" label={t("currentPassword")}>
          <input
            id="pw-current"
            name="current-password"
            type="password"
            autocomplete="current-password"
            value={current}
            onInput={(e) => setCurrent(e.currentTarget.value)}
            required
          />
        </Field>
        <Field id="pw-new" label={t("newPassword")} hint={t("passwordHint")}>
          <input
            id="pw-new"
            name="new-password"
            type="password"
            autocomplete="new-password"
            value={next}
            aria-describedby="pw-new-hint"
            onInput={(e) => setNext(e.currentTarget.value)}
            required
          />
        </Field>
        <InputHint text={hint} />
        <ErrorMessage error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {t("changePassword")}
        </button>
        <Done text={done} />
      </form>
    </section>
  );
}

function Mail() {
  const [m, setM] = useState<MailSettings | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const load = () => {
    setLoadError(null);
    unwrap(api.GET("/v1/me/mail")).then(setM, setLoadError);
  };
  useEffect(load, []);
  // The link confirmed in another tab: shown here at once.
  useEffect(() => onMailVerified(load), []);
  return (
    <section class="panel mail" aria-labelledby="mail-h">
      <h2 id="mail-h">{t("mailTitle")}</h2>
      <p>{t("mailExplain")}</p>
      <ErrorMessage error={loadError} onRetry={load} />
      {m === null ? (
        loadError ? null : <p>{t("loading")}</p>
      ) : (
        <>
          {m.enabled ? null : (
            <p class="notice" data-mail-disabled>
              {t("err_mail_disabled")}
            </p>
          )}
          <MailAddress m={m} set={setM} />
          <MailChoices m={m} set={setM} />
        </>
      )}
    </section>
  );
}

function MailAddress(props: { m: MailSettings; set: (m: MailSettings) => void }) {
  const { m } = props;
  const [address, setAddress] = useState("");
  const [done, setDone] = useState<string | null>(null);
  const [run, busy, error] = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setDone(null);
    void run(async () => {
      const r = await unwrap(api.POST("/v1/me/mail/address", { body: { address: address.trim() } }));
      props.set(r);
      setAddress("");
      setDone(t("mailLinkSent", { address: r.pending_address ?? address.trim() }));
    });
  };
  const remove = () =>
    void run(async () => {
      await unwrap(api.DELETE("/v1/me/mail/address"));
      props.set({ ...m, address: null, pending_address: null });
      setDone(t("mailRemoved"));
    });
  return (
    <div class="mail-address">
      {m.address ? (
        <p data-mail-address={m.address}>
          {t("mailGoesTo", { address: m.address })}{" "}
          <button type="button" class="small" disabled={busy} onClick={remove}>
            {t("mailRemove")}
          </button>
        </p>
      ) : m.enabled ? (
        <p data-mail-address="">{t("mailNoAddress")}</p>
      ) : null}
      {m.pending_address ? <p class="hint">{t("mailPending", { address: m.pending_address })}</p> : null}
      {m.enabled ? (
        <form onSubmit={submit} noValidate class="inline-form">
          <Field id="mail-address" label={m.address ? t("mailNewAddress") : t("mailAddress")} hint={t("mailAddressHint")}>
            <input
              id="mail-address"
              name="email"
              type="email"
              autocomplete="email"
              value={address}
              aria-describedby="mail-address-hint"
              onInput={(e) => setAddress(e.currentTarget.value)}
              required
            />
          </Field>
          <button type="submit" disabled={busy || address.trim() === ""}>
            {t("mailSendLink")}
          </button>
        </form>
      ) : null}
      <ErrorMessage error={error} />
      <Done text={done} />
    </div>
  );
}

/** "Deadline in less than N hours" as typed: a whole number 0–720, else null. */
function deadlineHours(typed: string): number | null {
  const h = Number(typed);
  return typed.trim() === "" || !Number.isInteger(h) || h < 0 || h > 720 ? null : h;
}

/** The "deadline in less than N hours" field of the mail and the push choices. */
function HoursField(props: { id: string; value: string; invalid: boolean; onInput: (v: string) => void }) {
  return (
    <div class="field">
      <label for={props.id}>{t("mailDeadlineHours")}</label>
      <input
        id={props.id}
        type="number"
        inputMode="numeric"
        min={0}
        max={720}
        step={1}
        value={props.value}
        aria-describedby={`${props.id}-hint`}
        aria-invalid={props.invalid ? "true" : undefined}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
      <small id={`${props.id}-hint`} class="hint">
        {t("mailDeadlineHint")}
      </small>
    </div>
  );
}

function MailChoices(props: { m: MailSettings; set: (m: MailSettings) => void }) {
  const { m } = props;
  const [yourTurn, setYourTurn] = useState(m.your_turn);
  const [finished, setFinished] = useState(m.game_finished);
  const [digest, setDigest] = useState(m.digest);
  const [hours, setHours] = useState(String(m.deadline_hours ?? 0));
  const [hint, setHint] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [run, busy, error] = useAction();
  const off = !m.enabled;
  const submit = (e: Event) => {
    e.preventDefault();
    setDone(null);
    const h = deadlineHours(hours);
    if (h === null) return setHint(t("badDeadlineHours"));
    setHint(null);
    void run(async () => {
      const r = await unwrap(
        api.PATCH("/v1/me/mail", {
          body: { your_turn: yourTurn, game_finished: finished, digest, deadline_hours: h },
        }),
      );
      props.set(r);
      setDone(t("saved"));
    });
  };
  return (
    <form onSubmit={submit} noValidate class="mail-choices">
      <fieldset disabled={off}>
        <legend>{t("mailChoicesTitle")}</legend>
        <label class="check">
          <input type="checkbox" id="mail-turn" checked={yourTurn} onChange={(e) => setYourTurn(e.currentTarget.checked)} />
          {t("mailYourTurn")}
        </label>
        <HoursField id="mail-hours" value={hours} invalid={hint !== null} onInput={setHours} />
        <label class="check">
          <input type="checkbox" id="mail-finished" checked={finished} onChange={(e) => setFinished(e.currentTarget.checked)} />
          {t("mailGameFinished")}
        </label>
        <label class="check">
          <input type="checkbox" id="mail-digest" checked={digest} onChange={(e) => setDigest(e.currentTarget.checked)} />
          {t("mailDigest")}
        </label>
        <InputHint text={hint} />
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy}>
          {t("save")}
        </button>
        <Done text={done} />
      </fieldset>
    </form>
  );
}

/** A base64url string (the server's VAPID key) as bytes, for `pushManager.subscribe`. */
function base64url(s: string): Uint8Array<ArrayBuffer> {
  const b = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4));
  const out = new Uint8Array(new ArrayBuffer(b.length));
  for (let i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
  return out;
}

/** This browser's push subscription, if it has one and may have one. */
async function browserSubscription(): Promise<PushSubscription | null> {
  if (!("serviceWorker" in navigator) || !("PushManager" in window)) return null;
  const reg = await navigator.serviceWorker.getRegistration();
  return (await reg?.pushManager.getSubscription()) ?? null;
}

/**
 * Notifications on this device (Web Push): turned on only by the person's click, which is
 * when the browser asks for permission (never on load); the choices of what to be told hold
 * for every device of the account.
 */
function Push() {
  const [settings, setSettings] = useState<PushSettings | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [here, setHere] = useState<"unsupported" | "off" | "on" | "blocked">("off");
  const [note, setNote] = useState<string | null>(null);
  const [run, busy, error] = useAction();
  const supported = "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
  useEffect(() => {
    unwrap(api.GET("/v1/me/push")).then(setSettings, setLoadError);
    if (!supported) return setHere("unsupported");
    if (Notification.permission === "denied") return setHere("blocked");
    void browserSubscription().then((sub) => setHere(sub ? "on" : "off"));
  }, []);
  const turnOn = () =>
    void run(async () => {
      setNote(null);
      const permission = await Notification.requestPermission();
      if (permission !== "granted") {
        setHere(permission === "denied" ? "blocked" : "off");
        return setNote(t("pushNotAllowed"));
      }
      const { public_key } = await unwrap(api.GET("/v1/push/key"));
      const reg = await navigator.serviceWorker.ready;
      let sub: PushSubscription;
      try {
        sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: base64url(public_key) });
      } catch (e) {
        return setNote(t("pushUnavailable", { why: e instanceof Error ? e.message : String(e) }));
      }
      const json = sub.toJSON() as { endpoint: string; keys: { p256dh: string; auth: string } };
      await unwrap(api.POST("/v1/me/push-subscriptions", { body: { endpoint: json.endpoint, keys: json.keys, language: lang.get() } }));
      setHere("on");
      setSettings(await unwrap(api.GET("/v1/me/push")));
      setNote(t("pushOn"));
    });
  const turnOff = () =>
    void run(async () => {
      setNote(null);
      const sub = await browserSubscription();
      if (sub) {
        const mine = (await unwrap(api.GET("/v1/me/push-subscriptions"))).items.find((x) => x.endpoint === sub.endpoint);
        if (mine) await unwrap(api.DELETE("/v1/me/push-subscriptions/{id}", { params: { path: { id: mine.id } } }));
        await sub.unsubscribe();
      }
      setHere("off");
      setSettings(await unwrap(api.GET("/v1/me/push")));
      setNote(t("pushOff"));
    });
  return (
    <section class="panel push" aria-labelledby="push-h">
      <h2 id="push-h">{t("pushTitle")}</h2>
      <p>{t("pushExplain")}</p>
      <ErrorMessage error={loadError} />
      <p data-push-here={here}>
        {here === "unsupported" ? t("pushUnsupported") : here === "blocked" ? t("pushBlocked") : here === "on" ? t("pushHereOn") : t("pushHereOff")}
      </p>
      {here === "off" ? (
        <button type="button" class="primary" disabled={busy} onClick={turnOn} data-push="on">
          {t("pushTurnOn")}
        </button>
      ) : here === "on" ? (
        <button type="button" disabled={busy} onClick={turnOff} data-push="off">
          {t("pushTurnOff")}
        </button>
      ) : null}
      <ErrorMessage error={error} />
      {note ? (
        <p class="hint" role="status" data-push-note>
          {note}
        </p>
      ) : null}
      {settings ? <PushChoices p={settings} set={setSettings} /> : null}
    </section>
  );
}

function PushChoices(props: { p: PushSettings; set: (p: PushSettings) => void }) {
  const { p } = props;
  const [yourTurn, setYourTurn] = useState(p.your_turn);
  const [finished, setFinished] = useState(p.game_finished);
  const [rematch, setRematch] = useState(p.rematch_offered);
  const [hours, setHours] = useState(String(p.deadline_hours ?? 0));
  const [hint, setHint] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [run, busy, error] = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setDone(null);
    const h = deadlineHours(hours);
    if (h === null) return setHint(t("badDeadlineHours"));
    setHint(null);
    void run(async () => {
      const r = await unwrap(
        api.PATCH("/v1/me/push", { body: { your_turn: yourTurn, game_finished: finished, rematch_offered: rematch, deadline_hours: h } }),
      );
      props.set(r);
      setDone(t("saved"));
    });
  };
  return (
    <form onSubmit={submit} noValidate class="push-choices">
      <fieldset>
        <legend>{t("pushChoicesTitle")}</legend>
        <label class="check">
          <input type="checkbox" id="push-turn" checked={yourTurn} onChange={(e) => setYourTurn(e.currentTarget.checked)} />
          {t("mailYourTurn")}
        </label>
        <HoursField id="push-hours" value={hours} invalid={hint !== null} onInput={setHours} />
        <label class="check">
          <input type="checkbox" id="push-finished" checked={finished} onChange={(e) => setFinished(e.currentTarget.checked)} />
          {t("mailGameFinished")}
        </label>
        <label class="check">
          <input type="checkbox" id="push-rematch" checked={rematch} onChange={(e) => setRematch(e.currentTarget.checked)} />
          {t("pushRematch")}
        </label>
        <InputHint text={hint} />
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy}>
          {t("save")}
        </button>
        <Done text={done} />
      </fieldset>
    </form>
  );
}

function LogoutEverywhere(props: { guest: boolean }) {
  const [asking, setAsking, ask, first] = useAsking();
  const [run, busy, error] = useAction();
  const confirm = () =>
    void run(async () => {
      await unwrap(api.POST("/v1/me/logout"));
      signOut(t("loggedOutEverywhere"));
    });
  return (
    <section class="panel" aria-labelledby="logout-h">
      <h2 id="logout-h">{t("logoutEverywhereTitle")}</h2>
      <p>{t("logoutEverywhereText")}</p>
      {props.guest ? <p class="notice">{t("guestCannotReturn")}</p> : null}
      <ErrorMessage error={error} />
      {asking ? (
        <div role="group" aria-labelledby="logout-q">
          <p id="logout-q">{t("logoutEverywhereConfirm")}</p>
          <button
            type="button"
            class="danger"
            data-confirm="logout"
            ref={first as RefObject<HTMLButtonElement | null>}
            disabled={busy}
            onClick={confirm}
          >
            {t("logoutEverywhere")}
          </button>{" "}
          <button type="button" onClick={() => setAsking(false)}>
            {t("cancel")}
          </button>
        </div>
      ) : (
        <button type="button" data-ask="logout" ref={ask} onClick={() => setAsking(true)}>
          {t("logoutEverywhere")}
        </button>
      )}
    </section>
  );
}

function DeleteAccount(props: { guest: boolean }) {
  const [asking, setAsking, ask, first] = useAsking();
  const [password, setPassword] = useState("");
  const [run, busy, error] = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await unwrap(api.DELETE("/v1/me", { body: props.guest ? {} : { password } }));
      signOut(t("accountDeleted"));
    });
  };
  return (
    <section class="panel" aria-labelledby="delete-h">
      <h2 id="delete-h">{t("deleteTitle")}</h2>
      <p>{t("deleteText")}</p>
      {asking ? (
        <form onSubmit={submit} noValidate aria-labelledby="delete-q">
          <p id="delete-q">
            <strong>{t("deleteConfirm")}</strong>
          </p>
          {props.guest ? null : (
            <Field id="delete-pw" label={t("deletePassword")}>
              <input
                ref={first as RefObject<HTMLInputElement | null>}
                id="delete-pw"
                name="password"
                type="password"
                autocomplete="current-password"
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
                required
              />
            </Field>
          )}
          <ErrorMessage error={error} />
          <button
            type="submit"
            class="danger"
            data-confirm="delete"
            ref={props.guest ? (first as RefObject<HTMLButtonElement | null>) : undefined}
            disabled={busy || (!props.guest && password === "")}
          >
            {t("deleteAccount")}
          </button>{" "}
          <button type="button" onClick={() => setAsking(false)}>
            {t("cancel")}
          </button>
        </form>
      ) : (
        <button type="button" class="danger" data-ask="delete" ref={ask} onClick={() => setAsking(true)}>
          {t("deleteAccount")}
        </button>
      )}
    </section>
  );
}

/**
 * Vacation: the hours left this year (as days and hours), going away until a date and time
 * (spent now, at most what is left), and coming back early (the unused whole hours come
 * back). Guests have none.
 */
function VacationPanel(props: { guest: boolean }) {
  const [vac, setVac] = useState<Vacation | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [until, setUntil] = useState("");
  const [hint, setHint] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [run, busy, error] = useAction();
  const load = () => {
    if (props.guest) return;
    setLoadError(null);
    getVacation().then(setVac, setLoadError);
  };
  useEffect(load, [props.guest]);
  const goAway = (e: Event) => {
    e.preventDefault();
    const at = until ? new Date(until).getTime() : NaN;
    if (!Number.isFinite(at) || at <= Date.now()) return setHint(t("badAwayUntil"));
    setHint(null);
    setDone(null);
    void run(async () => {
      const v = await setAway(new Date(at).toISOString());
      setVac(v);
      setUntil("");
      setDone(t("saved"));
    });
  };
  const back = () =>
    void run(async () => {
      setDone(null);
      setVac(await setAway(null));
      setDone(t("saved"));
    });
  return (
    <section class="panel vacation" aria-labelledby="vacation-h">
      <h2 id="vacation-h">{t("vacationTitle")}</h2>
      {props.guest ? (
        <p data-vacation="guest">{t("vacationGuest")}</p>
      ) : (
        <>
          <p>{t("vacationText")}</p>
          <ErrorMessage error={loadError} onRetry={load} />
          {vac === null ? (
            loadError ? null : <p>{t("loading")}</p>
          ) : (
            <>
              <p data-vacation-hours={vac.hours_left}>
                {t("vacationLeft", { left: hoursText(vac.hours_left), days: vac.days_per_year })}
              </p>
              {vac.away_until ? (
                <p data-away-until={vac.away_until}>
                  {t("awayNow", { time: dateTime(vac.away_until) })}{" "}
                  <button type="button" disabled={busy} data-back-now onClick={back}>
                    {t("backNow")}
                  </button>
                </p>
              ) : (
                <form onSubmit={goAway} noValidate>
                  <Field id="away-until" label={t("awayUntil")} hint={t("awayUntilHint")}>
                    <input
                      id="away-until"
                      type="datetime-local"
                      value={until}
                      min={localInput(Date.now())}
                      max={localInput(Date.now() + vac.hours_left * 3_600_000)}
                      aria-describedby="away-until-hint"
                      aria-invalid={hint ? "true" : undefined}
                      onInput={(e) => setUntil(e.currentTarget.value)}
                    />
                  </Field>
                  <InputHint text={hint} />
                  <button type="submit" disabled={busy || vac.hours_left === 0}>
                    {t("goAway")}
                  </button>
                </form>
              )}
            </>
          )}
          <ErrorMessage error={error} />
          <Done text={done} />
        </>
      )}
    </section>
  );
}
