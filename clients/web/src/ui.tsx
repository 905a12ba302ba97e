// Small shared pieces of the UI: cards, error messages, buttons that show they are busy.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { CardFace } from "../../typescript/src/index.ts";
import { errorText } from "./api";
import { joinNames, lang, t } from "./i18n";

/** A bullhead, drawn once in index.html and reused. */
export function Bull() {
  return (
    <svg class="bull" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <use href="#bull" />
    </svg>
  );
}

/** A small clock or pause sign, drawn once in index.html (no font has to have it). */
export function Icon(props: { name: "clock" | "pause" }) {
  return (
    <svg class="icon" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <use href={`#${props.name}`} />
    </svg>
  );
}

/** A row-game card: its number, its bullheads as icons (colour is only a second cue). */
export function Card(props: { n: number; bulls: number; mark?: string | undefined; class?: string }) {
  const { n, bulls: b, mark } = props;
  return (
    <span
      class={`card b${Math.min(b, 7)} ${props.class ?? ""}`}
      role="img"
      aria-label={t("cardLabel", { card: n, bulls: b }) + (mark ? `, ${mark}` : "")}
    >
      <span class="num" aria-hidden="true">
        {n}
      </span>
      <span class="heads" aria-hidden="true">
        {Array.from({ length: b }, (_, i) => (
          <Bull key={i} />
        ))}
      </span>
      {mark ? (
        <span class="mark" aria-hidden="true">
          {mark}
        </span>
      ) : null}
    </span>
  );
}

const SUIT: Record<string, string> = { clubs: "♣", diamonds: "♦", hearts: "♥" };

/**
 * A nimm-oder-schieb card's rank and suit as players of the current language write them
 * (German: B for the jack, D for the queen, as the server's German labels); game views carry
 * English faces, so the label is made here and follows a language switch at once.
 */
export function nosLabel(c: CardFace): string {
  const rank = lang.get() === "de" ? ({ J: "B", Q: "D" } as Record<string, string>)[c.rank] ?? c.rank : c.rank;
  return `${rank}${SUIT[c.suit] ?? ""}`;
}

/**
 * A nimm-oder-schieb card: its value large (the number that counts), its rank and suit
 * small beneath. `setBack`: a card of a run that does not count (only the run's lowest does).
 */
export function NosCard(props: { c: CardFace; big?: boolean; setBack?: boolean }) {
  const { c } = props;
  const label = nosLabel(c);
  return (
    <span
      class={`card nos suit-${c.suit}${props.big ? " big" : ""}${props.setBack ? " set-back" : ""}`}
      role="img"
      aria-label={t("nosCardLabel", { label, value: c.value })}
      data-value={c.value}
    >
      <span class="value" aria-hidden="true">
        {c.value}
      </span>
      <span class="rank" aria-hidden="true">
        {label}
      </span>
    </span>
  );
}

/** Runs of consecutive values, lowest first; each run counts its lowest value (runs cross suits). */
export function runsOf(cards: CardFace[]): CardFace[][] {
  const sorted = [...cards].sort((a, b) => a.value - b.value);
  const runs: CardFace[][] = [];
  for (const c of sorted) {
    const last = runs[runs.length - 1];
    const top = last?.[last.length - 1];
    if (last && top && top.value === c.value - 1) last.push(c);
    else runs.push([c]);
  }
  return runs;
}

/** What a hand's cards count: the lowest value of each run. */
export function runPoints(runs: CardFace[][]): number {
  return runs.reduce((a, r) => a + (r[0]?.value ?? 0), 0);
}

/**
 * A hand of nimm-oder-schieb cards grouped into runs: each run of two or more cards in one
 * frame with a caption ("run 33–35: counts 33"), its cards above the lowest set back. A
 * screen reader hears one sentence instead: the values, the runs and what they count.
 */
export function NosRuns(props: { runs: CardFace[][]; title: string }) {
  const { runs } = props;
  const parts = runs.map((r) => {
    const from = r[0]?.value ?? 0;
    const to = r[r.length - 1]?.value ?? from;
    return r.length > 1 ? t("runPart", { from, to }) : String(from);
  });
  return (
    <div class="nos-runs">
      <p class="visually-hidden" data-runs-summary>
        {t("runsSummary", { title: props.title, list: joinNames(parts), points: runPoints(runs) })}
      </p>
      <ul class="runs" aria-hidden="true">
        {runs.map((r) => {
          const from = r[0]?.value ?? 0;
          const to = r[r.length - 1]?.value ?? from;
          return (
            <li key={from} class={`run${r.length > 1 ? " multi" : ""}`} data-run={`${from}-${to}`} data-run-length={r.length}>
              <span class="run-cards">
                {r.map((c, i) => (
                  <NosCard key={c.value} c={c} setBack={i > 0} />
                ))}
              </span>
              {r.length > 1 ? <span class="run-caption">{t("runCaption", { from, to })}</span> : null}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

/** A problem with the input, found before anything is sent (read out at once). */
export function InputHint(props: { text: string | null | false }) {
  if (!props.text) return null;
  return (
    <p class="error" role="alert">
      {props.text}
    </p>
  );
}

/** The server's rule for passwords (`validation_failed` otherwise): 8 to 128 characters. */
export function passwordLengthOk(password: string): boolean {
  return password.length >= 8 && password.length <= 128;
}

/** An error as a sentence (with the server's detail where it names the input). */
export function ErrorMessage(props: { error: unknown; onRetry?: () => void }) {
  if (!props.error) return null;
  const { text, detail } = errorText(props.error);
  return (
    <div class="error" role="alert">
      <p>{text}</p>
      {detail ? <p class="detail">{t("errDetail", { detail })}</p> : null}
      {props.onRetry ? (
        <button type="button" onClick={props.onRetry}>
          {t("retry")}
        </button>
      ) : null}
    </div>
  );
}

/**
 * Runs an async action from a button or form: disables it meanwhile and keeps the error
 * to show. Returns [run, busy, error, clearError].
 */
export function useAction(): [
  (f: () => Promise<unknown>) => Promise<void>,
  boolean,
  unknown,
  () => void,
] {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (f: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await f();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return [run, busy, error, () => setError(null)];
}

export function Field(props: {
  label: string;
  hint?: string | undefined;
  children: ComponentChildren;
  id: string;
}) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint ? (
        <small id={`${props.id}-hint`} class="hint">
          {props.hint}
        </small>
      ) : null}
    </div>
  );
}

export function Select<T extends string>(props: {
  id: string;
  value: T;
  options: readonly { value: T; label: string }[];
  onChange: (v: T) => void;
  disabled?: boolean;
  /** The id of a hint that describes the choice. */
  describedBy?: string | undefined;
}) {
  return (
    <select
      id={props.id}
      value={props.value}
      disabled={props.disabled}
      aria-describedby={props.describedBy}
      onChange={(e) => props.onChange(e.currentTarget.value as T)}
    >
      {props.options.map((o) => (
        <option key={o.value} value={o.value}>
          {o.label}
        </option>
      ))}
    </select>
  );
}

/** Copies text to the clipboard and says so. */
export function CopyButton(props: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <>
      <button
        type="button"
        onClick={() => {
          void navigator.clipboard?.writeText(props.text).then(
            () => setDone(true),
            () => setDone(false),
          );
        }}
      >
        {props.label ?? t("copy")}
      </button>
      <span role="status" class="copied">
        {done ? t("copied") : ""}
      </span>
    </>
  );
}
