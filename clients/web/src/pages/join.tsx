// `#/join/<game>/<code>`: takes a seat in a private game with its invite code, then opens it.
// `#/join/<game>`: takes the seat a rematch keeps for me (no code needed), then opens it.
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, unwrap } from "../api";
import { t } from "../i18n";
import { go, href } from "../router";
import { ErrorMessage } from "../ui";

export function JoinPage(props: { id: string; code: string | null }) {
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    unwrap(
      api.POST("/v1/games/{id}/commands", {
        params: { path: { id: props.id } },
        body: props.code === null ? { type: "join" } : { type: "join", invite_code: props.code },
      }),
    ).then(
      () => live && go(href("games", props.id)),
      (e: unknown) => {
        if (!live) return;
        // Already seated (or the game has begun and I play in it): just open it.
        if (e instanceof ApiError && (e.code === "already_seated" || e.code === "not_in_lobby")) {
          go(href("games", props.id));
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
