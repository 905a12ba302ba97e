// `#/join/<game>/<code>`: takes a seat in a private game with its invite code, then opens it.
// `#/join/<game>`: takes the seat a rematch keeps for me (no code needed), then opens it.
// `#/invite/<code>`: takes a seat in the game of a typed invite code, then opens it.
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, unwrap } from "../api";
import { t } from "../i18n";
import { go, href } from "../router";
import { ErrorMessage } from "../ui";

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
