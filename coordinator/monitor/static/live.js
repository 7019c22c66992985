/* hybridsim monitor, live page: frames from /events (server-sent events), Hold/Resume/Abort via /api/<call>.
 * The access token comes from the address (#token=... as the coordinator prints it) or the token field;
 * it is taken out of the address bar at once and sent only in the X-Hybridsim-Token header. */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const token = $("token");
  const fromUrl = new URLSearchParams(location.hash.slice(1)).get("token")
               || new URLSearchParams(location.search).get("token");
  if (fromUrl) {
    token.value = fromUrl;
    history.replaceState(null, "", location.pathname);
  }

  function say(text, kind) {
    const el = $("message");
    el.textContent = text;
    el.className = kind || "";
  }

  let state = "";
  function enable() {
    const live = state === "running" || state === "held" || state === "starting";
    $("hold").disabled = state !== "running";
    $("resume").disabled = state !== "held";
    $("abort").disabled = !live;
  }
  hybridsimMonitor.onStateChange((s) => { state = s.split(":")[0]; enable(); });

  async function control(call) {
    if (!token.value) {
      say(`${call}: enter the run's access token (the coordinator printed it)`, "error");
      token.focus();
      return;
    }
    try {
      const reply = await fetch(`api/${call}`, { method: "POST", headers: { "X-Hybridsim-Token": token.value } });
      const body = await reply.json();
      if (reply.ok) say(`${call}: ${body.state} at step ${body.step}`, "ok");
      else say(`${call} refused: ${body.error}`, "error");
    } catch (err) {
      say(`${call}: the monitor server did not answer (${err})`, "error");
    }
  }

  let abortArmed = null;
  $("hold").addEventListener("click", () => control("hold"));
  $("resume").addEventListener("click", () => control("resume"));
  $("abort").addEventListener("click", () => {
    const button = $("abort");
    if (abortArmed === null) {
      button.textContent = "Confirm abort";
      button.classList.add("armed");
      abortArmed = setTimeout(() => { abortArmed = null; button.textContent = "Abort"; button.classList.remove("armed"); },
                              4000);
      return;
    }
    clearTimeout(abortArmed);
    abortArmed = null;
    button.textContent = "Abort";
    button.classList.remove("armed");
    control("abort");
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "h" && e.altKey) control("hold");  // Alt+H: hold at once
  });

  const events = new EventSource("events");
  events.addEventListener("info", (e) => hybridsimMonitor.reset(JSON.parse(e.data)));
  events.addEventListener("frame", (e) => hybridsimMonitor.addFrame(JSON.parse(e.data)));
  events.addEventListener("link", (e) => {
    const link = JSON.parse(e.data);
    $("link").textContent = link.text;
    $("link").className = link.ok ? "ok" : "error";
  });
  events.onerror = () => { $("link").textContent = "monitor server unreachable; retrying"; $("link").className = "error"; };
  enable();
})();
