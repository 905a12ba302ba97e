// `#/join/<game>/<code>`: takes a seat in a private game with its invite code, then opens it.
// `#/join/<game>`: takes the seat a rematch keeps for me (no code needed), then opens it.
// `#/invite/<code>`: takes a seat in the game of a typed invite code, then opens it.
// Before anyone signs in, `InviteNote` says who invites to which game (the sign-in page shows
// it for these routes).
import { useEffect, useState } from "preact/hooks";
import type { InvitePreview } from "../../../typescript/src/index.ts";
import { api, ApiError, unwrap } from "../api";
import { rulesetName, t } from "../i18n";
import { go, href, type Route } from "../router";
import { ErrorMessage } from "../ui";

/** The variants' own names, the same in both languages (as the boxes print them). */
const VARIANT_NAMES: Record<string, string> = { taktik: "Taktik", logik: "Logik", profi: "Profi" };

/** "6 nimmt! (Taktik)": the game and its variant, if any but the standard one ("6 nimmt!"
 *  kept on one line). */
function gameLabel(p: InvitePreview): string {
  const variant = p.preset ? VARIANT_NAMES[p.preset] : undefined;
  const game = rulesetName(p.ruleset).replace(/^(\S+) nimmt!/, "$1\u00a0nimmt!");
  return variant ? `${game} (${variant})` : game;
}

/** The invite code a route carries (an invite link, a typed code), else null. */
export function inviteOf(r: Route): { id: string | null; code: string } | null {
  if (r.page === "join" && r.code !== null) return { id: r.id, code: r.code };
  if (r.page === "invite") return { id: null, code: r.code };
  return null;
}

/**
 * What an invite link invites to, for a person not signed in yet: who invites to which
 * game and how many seats are taken (or that it has begun or ended), or that no game has
 * this code. Asked without a token (`GET /v1/invites/{code}`).
 */
export function InviteNote(props: { id: string | null; code: string }) {
  const [preview, setPreview] = useState<InvitePreview | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    setPreview(null);
    setError(null);
    unwrap(api.GET("/v1/invites/{code}", { params: { path: { code: props.code } } })).then(
      (p) => {
        if (!live) return;
        // A link whose code belongs to another game names no game either.
        if (props.id !== null && p.game_id !== props.id) setError(new ApiError(404, "not_found", "not found"));
        else setPreview(p);
      },
      (e: unknown) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [props.id, props.code]);
  const unknown = error instanceof ApiError && error.code === "not_found";
  if (!preview && !error) return null;
  const game = preview ? gameLabel(preview) : "";
  return (
    <section class="panel invite-note" aria-labelledby="invite-note-h" data-invite={preview ? preview.status : unknown ? "unknown" : "error"}>
      <h2 id="invite-note-h">{t("inviteTitle")}</h2>
      {unknown ? <p class="invite-unknown">{t("inviteUnknown")}</p> : error ? <ErrorMessage error={error} /> : null}
      {preview ? (
        <>
          <p class="invite-line">
            {preview.name
              ? t("invitesYouNamed", { host: preview.host, name: preview.name, game })
              : t("invitesYou", { host: preview.host, game })}
            {preview.status === "lobby" ? ` — ${t("inviteSeats", { taken: preview.seats_taken, players: preview.players })}` : "."}
          </p>
          {preview.status === "active" ? (
            <p>{t("inviteStarted")}</p>
          ) : preview.status === "finished" ? (
            <p>{t("inviteFinished")}</p>
          ) : preview.free_seats === 0 ? (
            <p>{t("inviteFull")}</p>
          ) : (
            <p class="hint">{t("inviteSignIn")}</p>
          )}
        </>
      ) : null}
    </section>
  );
}

export function JoinPage(props: { id: string | null; code: string | null }) {
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    const id = props.id;
    if (id === null) {
      // The code alone: the server finds the game.
      if (props.code === null) return;
      unwrap(api.POST("/v1/invites/{code}/join", { params: { path: { code: props.code } } })).then(
        (g) => live && go(href("games", g.id)),
        (e: unknown) => live && setError(e),
      );
      return () => {
        live = false;
      };
    }
    unwrap(
      api.POST("/v1/games/{id}/commands", {
        params: { path: { id } },
        body: props.code === null ? { type: "join" } : { type: "join", invite_code: props.code },
      }),
    ).then(
      () => live && go(href("games", id)),
      (e: unknown) => {
        if (!live) return;
        // Already seated (or the game has begun and I play in it): just open it.
        if (e instanceof ApiError && (e.code === "already_seated" || e.code === "not_in_lobby")) {
          go(href("games", id));
        } else setError(e);
      },
    );
    return () => {
      live = false;
    };
  }, [props.id, props.code]);
  return (
    <div>
      <h1 tabIndex={-1}>{t("join")}</h1>
      {error ? (
        <>
          <ErrorMessage error={error} />
          <p>
            <a href="#/">{t("toLobby")}</a>
          </p>
        </>
      ) : (
        <p role="status">{t("joining")}</p>
      )}
    </div>
  );
}
