// `#/mail/verify/<token>`: where the mailed verification link leads. Opening the link changes
// nothing; the address is confirmed only when the person presses "Confirm" (a mail scanner
// that opens every link in a mail confirms nothing). Needs no sign-in: the token identifies
// the account (`POST /v1/mail/verify`).
import { useState } from "preact/hooks";
import { announceMailVerified, api, ApiError, session, unwrap } from "../api";
import { t } from "../i18n";
import { useStore } from "../store";
import { ErrorMessage, useAction } from "../ui";

export function VerifyMailPage(props: { token: string }) {
  const s = useStore(session);
  const [address, setAddress] = useState<string | null>(null);
  const [gone, setGone] = useState(false);
  const [run, busy, error] = useAction();
  const confirm = () =>
    void run(async () => {
      try {
        const r = await unwrap(api.POST("/v1/mail/verify", { body: { token: props.token } }));
        setAddress(r.address);
        announceMailVerified();
      } catch (e) {
        // Unknown, used or expired: said in words, not as an error code.
        if (e instanceof ApiError && e.status === 404) setGone(true);
        else throw e;
      }
    });
  const next = s ? (
    <p>
      <a href="#/account">{t("mailVerifyToAccount")}</a>
    </p>
  ) : (
    <p>
      <a href="#/">{t("mailVerifyToStart")}</a>
    </p>
  );
  return (
    <div class="verify-mail">
      <h1 tabIndex={-1}>{t("mailVerifyTitle")}</h1>
      {address !== null ? (
        <>
          <p role="status" class="done" data-mail-verified={address}>
            {t("mailVerifyDone", { address })}
          </p>
          {next}
        </>
      ) : gone ? (
        <>
          <p role="alert" class="error" data-mail-link-gone>
            {t("mailVerifyGone")}
          </p>
          {next}
        </>
      ) : (
        <>
          <p>{t("mailVerifyExplain")}</p>
          <button type="button" class="primary" disabled={busy} onClick={confirm}>
            {t("mailVerifyConfirm")}
          </button>
          <ErrorMessage error={error} />
        </>
      )}
    </div>
  );
}
