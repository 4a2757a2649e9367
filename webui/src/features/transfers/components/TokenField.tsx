import { useId } from "react";
import { useToken } from "../token";

/** The catalog token (submitting, cancelling and retrying need one), kept for this tab only. */
export function TokenField({ invalid = false }: { invalid?: boolean }) {
  const [token, setToken] = useToken();
  const hint = useId();
  return (
    <div className="token-field">
      <label>
        Catalog token
        <input
          type="password"
          value={token}
          onChange={(e) => setToken(e.target.value)}
          autoComplete="off"
          spellCheck={false}
          aria-invalid={invalid}
          aria-describedby={hint}
        />
      </label>
      <p id={hint} className="hint">
        Kept in this tab only, until it closes. The catalog's operator makes one with{" "}
        <code>ndnsci catalog token create NAME</code>.
      </p>
    </div>
  );
}
