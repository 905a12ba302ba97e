// The rules pages: `#/rules` (the index), `#/rules/<ruleset>` and `#/rules/6-nimmt/<preset>`,
// each with the index of all games and variants at the top. The texts are in ../rules.ts.
import { lang, t } from "../i18n";
import { href } from "../router";
import { RULES_PAGES, rulesPath, rulesRef, rulesText, type RulesRef } from "../rules";
import { useStore } from "../store";

/** The link to a rules page, named after its game (and variant). */
export function RulesLink(props: { to: RulesRef | null; class?: string }) {
  useStore(lang);
  if (!props.to) return null;
  return (
    <a class={props.class ?? "rules-link"} href={href(...rulesPath(props.to))} data-rules={rulesPath(props.to).slice(1).join("/")}>
      {t("rulesOf", { name: rulesText(props.to).name })}
    </a>
  );
}

function Index(props: { current: RulesRef | null }) {
  const isCurrent = (r: RulesRef) => props.current?.ruleset === r.ruleset && props.current.preset === r.preset;
  const link = (r: RulesRef) => {
    const text = rulesText(r);
    const short = r.preset ? text.name.replace(/^6 nimmt! – /, "") : text.name;
    return (
      <a href={href(...rulesPath(r))} aria-current={isCurrent(r) ? "page" : undefined}>
        {r.preset ? <span class="visually-hidden">6 nimmt! – </span> : null}
        {short}
      </a>
    );
  };
  const games = RULES_PAGES.filter((r) => !r.preset);
  return (
    <nav class="rules-index" aria-label={t("rulesIndex")}>
      <ul>
        {games.map((g) => {
          const variants = RULES_PAGES.filter((r) => r.preset && r.ruleset === g.ruleset);
          return (
            <li key={g.ruleset}>
              {link(g)}
              {variants.length > 0 ? (
                <ul>
                  {variants.map((v) => (
                    <li key={v.preset}>{link(v)}</li>
                  ))}
                </ul>
              ) : null}
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

export function RulesPage(props: { ruleset: string | null; preset: string | null }) {
  useStore(lang);
  const ref = props.ruleset ? rulesRef(props.ruleset, props.preset) : null;
  if (!ref) {
    return (
      <div class="rules">
        <h1 tabIndex={-1}>{t("rulesTitle")}</h1>
        <p>{props.ruleset ? t("rulesMissing") : t("rulesIntro")}</p>
        <Index current={null} />
      </div>
    );
  }
  const text = rulesText(ref);
  return (
    <article class="rules" data-rules={rulesPath(ref).slice(1).join("/")}>
      <h1 tabIndex={-1}>{t("rulesOf", { name: text.name })}</h1>
      <Index current={ref} />
      {text.lead ? <p class="lead">{text.lead}</p> : null}
      {text.sections.map((s) => (
        <section key={s.heading}>
          <h2>{s.heading}</h2>
          {s.paragraphs.map((p, i) => (
            <p key={i}>{p}</p>
          ))}
        </section>
      ))}
    </article>
  );
}
