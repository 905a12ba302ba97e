// The nimm-oder-schieb hand calculator: tick the cards taken, enter the chips, and the
// server scores the hand (runs count their lowest card, chips count one point off each).
import { useEffect, useState } from "preact/hooks";
import type { CardFace, HandScoreBody } from "../../../typescript/src/index.ts";
import { api, rulesets, unwrap } from "../api";
import { t, type Key } from "../i18n";
import { ErrorMessage, NosCard, NosRuns } from "../ui";

export function CalculatorPage() {
  const [cards, setCards] = useState<CardFace[]>([]);
  const [picked, setPicked] = useState<Set<number>>(new Set());
  const [chips, setChips] = useState("0");
  const [result, setResult] = useState<HandScoreBody | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    rulesets().then(
      (all) => setCards(all.find((r) => r.name === "nimm-oder-schieb")?.cards ?? []),
      setError,
    );
  }, []);

  useEffect(() => {
    const n = Number(chips);
    if (!Number.isInteger(n) || n < 0 || n > 55) return;
    let live = true;
    const h = setTimeout(() => {
      unwrap(
        api.POST("/v1/rulesets/nimm-oder-schieb/score", {
          body: { cards: [...picked].sort((a, b) => a - b), chips: n },
        }),
      ).then(
        (r) => {
          if (!live) return;
          setResult(r);
          setError(null);
        },
        (e: unknown) => live && setError(e),
      );
    }, 150);
    return () => {
      live = false;
      clearTimeout(h);
    };
  }, [picked, chips]);

  const toggle = (v: number) => {
    const next = new Set(picked);
    if (next.has(v)) next.delete(v);
    else next.add(v);
    setPicked(next);
  };

  const suits = ["clubs", "diamonds", "hearts"] as const;
  return (
    <div class="calculator">
      <h1 tabIndex={-1}>{t("calcTitle")}</h1>
      <p>{t("calcExplain")}</p>
      {suits.map((s) => (
        <fieldset key={s} class="suit">
          <legend>{t(`suit_${s}` as Key)}</legend>
          <ul class="card-list">
            {cards
              .filter((c) => c.suit === s)
              .map((c) => (
                <li key={c.value}>
                  <button
                    type="button"
                    class="card-button"
                    aria-pressed={picked.has(c.value)}
                    onClick={() => toggle(c.value)}
                  >
                    <NosCard c={c} />
                  </button>
                </li>
              ))}
          </ul>
        </fieldset>
      ))}
      <div class="field">
        <label for="calc-chips">{t("chipsLeft")}</label>
        <input
          id="calc-chips"
          type="number"
          min={0}
          max={55}
          value={chips}
          onInput={(e) => setChips(e.currentTarget.value)}
        />
      </div>
      <p>
        <button type="button" onClick={() => setPicked(new Set())}>
          {t("clear")}
        </button>
      </p>
      <ErrorMessage error={error} />
      {result ? (
        <section class="panel" aria-labelledby="calc-res" aria-live="polite">
          <h2 id="calc-res">{t("totalScore")}</h2>
          <p class="total" data-total={result.total}>
            {t("cardPoints")} {result.card_points} − {t("chips")} {result.chips} = <strong>{result.total}</strong>
          </p>
          {result.runs.length > 0 ? (
            <>
              <h3>{t("runs")}</h3>
              <NosRuns runs={result.runs} title={t("runs")} />
            </>
          ) : null}
        </section>
      ) : null}
    </div>
  );
}
