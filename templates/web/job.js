// Follows a running job's log over Server-Sent Events. The browser resumes with
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
  source.addEventListener("end", function (e) {
    source.close();
    var state = document.getElementById("job-state");
    if (state) { state.textContent = e.data; state.className = "state " + e.data; }
  });
})();
