// Follows a running job's log and apply progress over Server-Sent Events. The browser resumes with
// Last-Event-ID after a dropped connection; lines are added as text, never as HTML.
(function () {
  var log = document.getElementById("log");
  if (!log || log.dataset.live !== "true" || !window.EventSource) return;
  var url = log.dataset.stream + "?after=" + encodeURIComponent(log.dataset.after || "0");
  var source = new EventSource(url);
  source.onmessage = function (e) {
    var empty = document.getElementById("log-empty");
    if (empty) empty.remove();
    var span = document.createElement("span");
    span.textContent = e.data;
    log.appendChild(span);
    log.appendChild(document.createTextNode("\n"));
    log.scrollTop = log.scrollHeight;
  };
  source.addEventListener("progress", function (e) {
    var parts = String(e.data).split("/");
    var done = parseInt(parts[0], 10), total = parseInt(parts[1], 10);
    if (isNaN(done) || isNaN(total)) return;
    var box = document.getElementById("progress");
    var bar = document.getElementById("progress-bar");
    var text = document.getElementById("progress-text");
    if (!box || !bar || !text) return;
    bar.max = Math.max(total, 1);
    bar.value = done;
    text.textContent = done + " of " + total + " guests finished";
    box.hidden = false;
  });
  function showState(name) {
    var state = document.getElementById("job-state");
    if (state) { state.textContent = name; state.className = "state " + name; }
    var box = document.getElementById("progress");
    if (box) box.className = "progress " + name;
  }
  source.addEventListener("state", function (e) { showState(e.data); });
  source.addEventListener("end", function (e) {
    source.close();
    showState(e.data);
  });
})();
