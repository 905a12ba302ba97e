// `#/join/<game>/<code>`: takes a seat in a private game with its invite code, then opens it.
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, unwrap } from "../api";
import { t } from "../i18n";
import { go, href } from "../router";
import { ErrorMessage } from "../ui";

export function JoinPage(props: { id: string; code: string }) {
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    unwrap(
      api.POST("/v1/games/{id}/commands", {
        params: { path: { id: props.id } },
        // The Command schema has no `invite_code` yet (it travels beside `type` for `join`).
        body: { type: "join", invite_code: props.code } as never,
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
