// The sign-in page: trades the one-time link in this page's address for a
// session (see api.js), then opens the viewer. The link is taken out of
// the address bar and history first.
import { signIn } from "./api.js";

async function main() {
  const link = new URLSearchParams(window.location.search).get("t") || "";
  history.replaceState(null, "", "/login");
  try {
    await signIn(link);
    window.location.replace("/");
  } catch (e) {
    const box = document.getElementById("main");
    box.textContent = "";
    const p = document.createElement("div");
    p.className = "error";
    p.setAttribute("role", "alert");
    p.textContent = e && e.message ? e.message : String(e);
    box.append(p);
  }
}

main();
