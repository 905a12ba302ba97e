// Score pads for games played with real cards: create one, record rounds, take the last one
// back, standings and winners. The list of one's pads is kept on this device (the API has
// no listing of pads).
import { useEffect, useState } from "preact/hooks";
import { rulesetValues, type EndCondition, type PadBody } from "../../../typescript/src/index.ts";
import { api, session, unwrap } from "../api";
import { dateTime, rulesetName, t } from "../i18n";
import { go, href } from "../router";
import { ErrorMessage, Field, Select, useAction } from "../ui";

interface KnownPad {
  id: string;
  ruleset: string;
  players: string[];
  created_at: string;
}

const key = () => `stammtisch.pads.${session.get()?.account.id ?? ""}`;

function knownPads(): KnownPad[] {
  try {
    return JSON.parse(localStorage.getItem(key()) ?? "[]") as KnownPad[];
  } catch {
    return [];
  }
}

function remember(p: PadBody): void {
  const list = knownPads().filter((k) => k.id !== p.id);
  list.unshift({ id: p.id, ruleset: p.ruleset, players: p.players, created_at: p.created_at });
  localStorage.setItem(key(), JSON.stringify(list.slice(0, 50)));
}

const ROUNDS_ONLY = new Set(["x-nimmt", "nimm-oder-schieb"]);

export function PadsPage() {
  const [ruleset, setRuleset] = useState<string>("6-nimmt");
  const [names, setNames] = useState<string[]>(["", "", ""]);
  const [endKind, setEndKind] = useState<"points" | "rounds">("points");
  const [points, setPoints] = useState(66);
  const [rounds, setRounds] = useState(2);
  const [run, busy, error] = useAction();
  const pads = knownPads();
  const kind = ROUNDS_ONLY.has(ruleset) ? "rounds" : endKind;

  const submit = (e: Event) => {
    e.preventDefault();
    const end: EndCondition = kind === "points" ? { points } : { rounds };
    void run(async () => {
      const pad = await unwrap(
        api.POST("/v1/scorepads", {
          body: { ruleset: ruleset as PadBody["ruleset"], players: names.map((n) => n.trim()), end },
        }),
      );
      remember(pad);
      go(href("pads", pad.id));
    });
  };

  return (
    <div class="pads">
      <h1 tabIndex={-1}>{t("padsTitle")}</h1>
      <p>{t("padsExplain")}</p>
      <div class="cols">
        <section class="panel" aria-labelledby="newpad-h">
          <h2 id="newpad-h">{t("newPad")}</h2>
          <form onSubmit={submit}>
            <Field id="p-ruleset" label={t("game")}>
              <Select
                id="p-ruleset"
                value={ruleset}
                onChange={(r) => {
                  setRuleset(r);
                  if (r === "nimm-oder-schieb") {
                    setRounds(1);
                    if (names.length < 3) setNames([...names, ""]);
                  }
                }}
                options={rulesetValues.map((r) => ({ value: r as string, label: rulesetName(r) }))}
              />
            </Field>
            <fieldset>
              <legend>{t("playerNames")}</legend>
              {names.map((n, i) => (
                <div class="name-row" key={i}>
                  <label for={`p-name-${i}`} class="visually-hidden">
                    {t("playerN", { n: i + 1 })}
                  </label>
                  <input
                    id={`p-name-${i}`}
                    value={n}
                    placeholder={t("playerN", { n: i + 1 })}
                    maxLength={32}
                    onInput={(e) => {
                      const v = e.currentTarget.value;
                      setNames(names.map((x, j) => (j === i ? v : x)));
                    }}
                  />
                  {names.length > 2 ? (
                    <button
                      type="button"
                      class="small"
                      aria-label={t("removePlayer", { n: i + 1 })}
                      onClick={() => setNames(names.filter((_, j) => j !== i))}
                    >
                      ✕
                    </button>
                  ) : null}
                </div>
              ))}
              {names.length < 10 ? (
                <button type="button" class="small" onClick={() => setNames([...names, ""])}>
                  + {t("addPlayer")}
                </button>
              ) : null}
            </fieldset>
            <fieldset>
              <legend>{t("end")}</legend>
              {ROUNDS_ONLY.has(ruleset) ? null : (
                <>
                  <label class="inline">
                    <input type="radio" name="pend" checked={kind === "points"} onChange={() => setEndKind("points")} />{" "}
                    {t("endPoints")}
                  </label>
                  <label class="inline">
                    <input type="radio" name="pend" checked={kind === "rounds"} onChange={() => setEndKind("rounds")} />{" "}
                    {t("endRounds")}
                  </label>
                </>
              )}
              {kind === "points" ? (
                ruleset === "6-nimmt" ? (
                  <Field id="p-points" label={t("points")}>
                    <Select
                      id="p-points"
                      value={String(points)}
                      onChange={(v) => setPoints(Number(v))}
                      options={["33", "66", "100"].map((v) => ({ value: v, label: v }))}
                    />
                  </Field>
                ) : (
                  <Field id="p-points" label={t("points")}>
                    <input id="p-points" type="number" min={1} max={999} value={points} onInput={(e) => setPoints(Number(e.currentTarget.value))} />
                  </Field>
                )
              ) : (
                <Field id="p-rounds" label={t("rounds")}>
                  <input id="p-rounds" type="number" min={1} max={50} value={rounds} onInput={(e) => setRounds(Number(e.currentTarget.value))} />
                </Field>
              )}
            </fieldset>
            <ErrorMessage error={error} />
            <button type="submit" class="primary" disabled={busy}>
              {t("createPad")}
            </button>
          </form>
        </section>
        <section class="panel" aria-labelledby="mypads-h">
          <h2 id="mypads-h">{t("yourPads")}</h2>
          {pads.length === 0 ? <p class="empty">{t("noPads")}</p> : null}
          <ul class="games">
            {pads.map((p) => (
              <li key={p.id} class="game-item">
                <a href={href("pads", p.id)}>
                  <strong>{rulesetName(p.ruleset)}</strong>: {p.players.join(", ")}
                </a>
                <span class="meta">{dateTime(p.created_at)}</span>
              </li>
            ))}
          </ul>
        </section>
      </div>
    </div>
  );
}

export function PadPage(props: { id: string }) {
  const [pad, setPad] = useState<PadBody | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [entry, setEntry] = useState<string[]>([]);
  const [run, busy, error] = useAction();

  useEffect(() => {
    unwrap(api.GET("/v1/scorepads/{id}", { params: { path: { id: props.id } } })).then(
      (p) => {
        setPad(p);
        remember(p);
        setEntry(p.players.map(() => ""));
      },
      setLoadError,
    );
  }, [props.id]);

  if (loadError) return <ErrorMessage error={loadError} />;
  if (!pad) return <p role="status">{t("loading")}</p>;
  const ifMatch = { "If-Match": `"${pad.version}"` };
  const record = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const p = await unwrap(
        api.POST("/v1/scorepads/{id}/rounds", {
          params: { path: { id: pad.id }, header: ifMatch },
          body: { scores: entry.map((s) => Number(s || "0")) },
        }),
      );
      setPad(p);
      setEntry(p.players.map(() => ""));
      document.getElementById("pad-score-0")?.focus();
    });
  };
  const takeBack = () =>
    void run(async () => {
      setPad(
        await unwrap(
          api.DELETE("/v1/scorepads/{id}/rounds/last", { params: { path: { id: pad.id }, header: ifMatch } }),
        ),
      );
    });
  const winners = new Set(pad.winners ?? []);
  const end = pad.end as { points?: number; rounds?: number };
  return (
    <div class="pad">
      <h1 tabIndex={-1}>
        {t("padsTitle")}: {rulesetName(pad.ruleset)}
      </h1>
      <p class="options">
        {end.points ? t("endAtPoints", { n: end.points }) : t("endAfterRounds", { n: end.rounds ?? 0 })}
      </p>
      <form onSubmit={record}>
        <div class="scroll">
          <table class="pad-table">
            <thead>
              <tr>
                <th scope="col">
                  <span class="visually-hidden">{t("rounds")}</span>
                </th>
                {pad.players.map((p, i) => (
                  <th scope="col" key={i}>
                    {p}
                    {winners.has(i) ? " ★" : ""}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {pad.rounds.map((r, i) => (
                <tr key={i}>
                  <th scope="row">{t("scoresRound", { n: i + 1 })}</th>
                  {r.map((n, j) => (
                    <td key={j}>{n}</td>
                  ))}
                </tr>
              ))}
              {pad.finished ? null : (
                <tr class="entry">
                  <th scope="row">{t("nextRound", { n: pad.rounds.length + 1 })}</th>
                  {pad.players.map((p, j) => (
                    <td key={j}>
                      <input
                        id={`pad-score-${j}`}
                        type="number"
                        inputMode="numeric"
                        aria-label={t("scoreFor", { name: p, n: pad.rounds.length + 1 })}
                        value={entry[j] ?? ""}
                        onInput={(e) => {
                          const v = e.currentTarget.value;
                          setEntry(entry.map((x, k) => (k === j ? v : x)));
                        }}
                      />
                    </td>
                  ))}
                </tr>
              )}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row">{t("total")}</th>
                {pad.totals.map((n, j) => (
                  <td key={j}>
                    <strong>{n}</strong>
                  </td>
                ))}
              </tr>
            </tfoot>
          </table>
        </div>
        <ErrorMessage error={error} />
        <div class="pad-actions">
          {pad.finished ? null : (
            <button type="submit" class="primary" disabled={busy}>
              {t("recordRound")}
            </button>
          )}
          {pad.rounds.length > 0 ? (
            <button type="button" disabled={busy} onClick={takeBack}>
              {t("takeBack")}
            </button>
          ) : null}
        </div>
      </form>
      <section class="panel" aria-labelledby="stand-h">
        <h2 id="stand-h">{t("standings")}</h2>
        {pad.finished ? (
          <p class="winners" role="status">
            {t("padFinished")}{" "}
            {t(winners.size > 1 ? "winnersMany" : "winners", {
              names: [...winners].map((w) => pad.players[w] ?? "").join(", "),
            })}
          </p>
        ) : null}
        <ul class="standings">
          {pad.standings.map((s) => (
            <li key={s.player}>
              {t("place")} {s.place}: <strong>{s.name}</strong> – {s.total}
            </li>
          ))}
        </ul>
      </section>
    </div>
  );
}
