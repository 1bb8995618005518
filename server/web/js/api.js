// The REST API as every client sees it (docs/protocol.md). The login lives in an HttpOnly
// cookie set by POST /auth/session: no script here ever holds the token.

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem.code || "error";
    this.problem = problem;
  }
}

// A login gone mid-session (expired, or logged out in another tab): back to the login form,
// then here again, rather than a page that silently stops refreshing.
export function toLogin() {
  location.href = "/app/?next=" + encodeURIComponent(location.pathname + location.search);
}

export async function api(method, path, body, { quiet401 = false } = {}) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (res.status === 204) return null;
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const err = new ApiError(res.status, data || {});
    if (res.status === 401 && !quiet401 && location.pathname !== "/app/") toLogin();
    throw err;
  }
  return data;
}

// Who is logged in (GET /me), or null: the page then shows the login form.
export async function whoami() {
  try {
    return await api("GET", "/me", undefined, { quiet401: true });
  } catch (e) {
    if (e instanceof ApiError && (e.status === 401 || e.status === 403)) return null;
    throw e;
  }
}

export const login = (user, password) => api("POST", "/auth/session", { user, password });
export const logout = () => api("DELETE", "/auth/session", undefined, { quiet401: true });

// A page that needs a login: the user, or off to the lobby's login form.
export async function requireLogin() {
  const me = await whoami();
  if (!me) {
    toLogin();
    throw new Error("not logged in");
  }
  return me;
}
