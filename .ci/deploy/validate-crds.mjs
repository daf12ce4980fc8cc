// The ServiceMonitor and PrometheusRule of a built overlay, validated against the schemas of
// prometheus-operator's own API types (@kubernetes-models/prometheus-operator, generated from
// github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring). Those schemas check
// types, patterns and required fields; like the CRDs, they do not reject unknown fields.
// Usage: node validate-crds.mjs BUILT.yaml KIND...   (each KIND named must be found)
import fs from "node:fs";
import { loadAll } from "js-yaml";
import { ServiceMonitor, PrometheusRule } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";

const models = { ServiceMonitor, PrometheusRule };
const [file, ...expected] = process.argv.slice(2);
let failed = 0;
const seen = new Set();
for (const doc of loadAll(fs.readFileSync(file, "utf8"))) {
  if (!doc || doc.apiVersion !== "monitoring.coreos.com/v1") continue;
  const Model = models[doc.kind];
  if (!Model) {
    console.log(`FAIL ${doc.kind}/${doc.metadata?.name}: no schema here for this kind`);
    failed++;
    continue;
  }
  seen.add(doc.kind);
  try {
    new Model(doc).validate();
    console.log(`ok   ${doc.kind}/${doc.metadata.name} against prometheus-operator's schema`);
  } catch (e) {
    console.log(`FAIL ${doc.kind}/${doc.metadata?.name}: ${e.message}`);
    failed++;
  }
}
for (const kind of expected) {
  if (!seen.has(kind)) {
    console.log(`FAIL no ${kind} in ${file}`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
