#!/usr/bin/env node
// Checks Kubernetes manifests against the API schemas, with no cluster (tests/cli/k8s-manifest.sh):
//
//   node tests/k8s/validate.js schema FILE...   every YAML document of each FILE, two ways:
//     - kubernetes-models: the object's JSON schema from the Kubernetes OpenAPI document
//       (types, required fields, enums such as mountPropagation or a hostPath type, formats);
//     - kubernetes-types through the TypeScript compiler: the object as a literal of its API
//       type, so a field the API does not have is an error (the schemas above allow any
//       unknown field: a misspelt "readOnyl: true" would pass them and be dropped by the API
//       server, leaving the mount writable). kubernetes-types declares a resource quantity a
//       string: write "100m", "64Mi" quoted.
//     A document whose apiVersion/kind neither package knows is an error. Prints
//     "valid: KIND/NAME (FILE, document N)" per document, "invalid: ..." with each error;
//     exit 0 when all are valid, 1 otherwise.
//   node tests/k8s/validate.js facts FILE         the DaemonSet's privileges and mounts, one fact a
//     line ("hostPID true", "capabilities.add SYS_ADMIN ...", "mount PATH volume=... ...").
//   node tests/k8s/validate.js data FILE NAME KEY  the value of KEY in the ConfigMap NAME.
//
// The packages and their versions: tests/k8s/package.json and package-lock.json, installed by
// tests/k8s/install.sh (npm ci).
"use strict";

const fs = require("fs");
const path = require("path");
const YAML = require("yaml");

function die(msg) {
    process.stderr.write(`validate.js: ${msg}\n`);
    process.exit(2);
}

// Every document of FILE as {doc, index}; a YAML error or warning (a duplicate key among them)
// is an error of the file.
function load(file) {
    const text = fs.readFileSync(file, "utf8");
    const docs = YAML.parseAllDocuments(text, { uniqueKeys: true, prettyErrors: true });
    const out = [];
    docs.forEach((d, i) => {
        const problems = [...d.errors, ...d.warnings];
        if (problems.length)
            throw new Error(`${file}: document ${i + 1}: ${problems.map((e) => e.message).join("; ")}`);
        const obj = d.toJS({ maxAliasCount: 0 });
        if (obj !== null && obj !== undefined)
            out.push({ obj, index: i + 1 });
    });
    return out;
}

function label(obj) {
    const name = obj && obj.metadata && obj.metadata.name;
    return `${(obj && obj.kind) || "?"}/${name || "?"}`;
}

// apiVersion "apps/v1" -> ["apps", "v1"]; "v1" -> ["", "v1"]
function splitApiVersion(apiVersion) {
    if (typeof apiVersion !== "string" || !apiVersion)
        return null;
    const slash = apiVersion.indexOf("/");
    return slash < 0 ? ["", apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

// kubernetes-models: kubernetes-models/GROUP/VERSION/KIND (the core group is "v1" alone)
function modelsCheck(obj) {
    const gv = splitApiVersion(obj.apiVersion);
    if (!gv || typeof obj.kind !== "string" || !/^[A-Za-z0-9]+$/.test(obj.kind))
        return ["apiVersion and kind must be set"];
    const dir = gv[0] ? `${gv[0]}/${gv[1]}` : gv[1];
    let Model;
    try {
        Model = require(`kubernetes-models/${dir}/${obj.kind}`)[obj.kind];
    } catch (e) {
        Model = undefined;
    }
    if (typeof Model !== "function")
        return [`kubernetes-models has no ${obj.apiVersion} ${obj.kind}`];
    try {
        new Model(obj).validate();
    } catch (e) {
        const errs = e && Array.isArray(e.errors) ? e.errors : null;
        if (!errs)
            return [String((e && e.message) || e)];
        return errs.map((x) => {
            const where = x.instancePath || "/";
            const params = x.params ? JSON.stringify(x.params) : "";
            return `${where}: ${x.message || x.keyword} ${params}`.trim();
        });
    }
    return [];
}

// kubernetes-types: GROUP's first label (core for ""), e.g. rbac.authorization.k8s.io -> rbac
function typesModule(obj) {
    const gv = splitApiVersion(obj.apiVersion);
    if (!gv)
        return null;
    const dir = gv[0] ? gv[0].split(".")[0] : "core";
    const rel = `kubernetes-types/${dir}/${gv[1]}`;
    try {
        require.resolve(`${rel}.d.ts`);
    } catch (e) {
        return null;
    }
    return rel;
}

// One TypeScript program over every document: "const dN: MODULE.KIND = {...};". Returns a
// list of error strings per document index.
function typesCheck(entries) {
    const ts = require("typescript");
    const virt = path.join(__dirname, "__manifest_check__.ts");
    const lines = [];
    const lineDoc = [];
    const errors = new Map();
    const push = (key, msg) => {
        if (!errors.has(key))
            errors.set(key, []);
        errors.get(key).push(msg);
    };
    entries.forEach((e, n) => {
        const mod = typesModule(e.obj);
        if (!mod || typeof e.obj.kind !== "string" || !/^[A-Za-z0-9]+$/.test(e.obj.kind)) {
            push(n, `kubernetes-types has no ${e.obj.apiVersion} ${e.obj.kind}`);
            return;
        }
        const head = [`import type * as m${n} from "${mod}";`, `export const d${n}: m${n}.${e.obj.kind} = `];
        const body = JSON.stringify(e.obj, null, 2).split("\n");
        for (const l of head) {
            lines.push(l);
            lineDoc.push(n);
        }
        body.forEach((l, i) => {
            lines.push(i === body.length - 1 ? `${l};` : l);
            lineDoc.push(n);
        });
    });
    const source = lines.join("\n") + "\n";
    const options = {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2020,
        module: ts.ModuleKind.CommonJS,
        moduleResolution: ts.ModuleResolutionKind.Node10,
        types: [],
        lib: ["lib.es2020.d.ts"],
        skipLibCheck: true,
    };
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (name, lang, onError, create) =>
        path.resolve(name) === virt
            ? ts.createSourceFile(name, source, lang, true)
            : getSourceFile(name, lang, onError, create);
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (name) => path.resolve(name) === virt || fileExists(name);
    const readFile = host.readFile.bind(host);
    host.readFile = (name) => (path.resolve(name) === virt ? source : readFile(name));
    const program = ts.createProgram([virt], options, host);
    for (const d of ts.getPreEmitDiagnostics(program)) {
        const msg = ts.flattenDiagnosticMessageText(d.messageText, " ");
        if (d.file && path.resolve(d.file.fileName) === virt && d.start !== undefined) {
            const { line } = d.file.getLineAndCharacterOfPosition(d.start);
            push(lineDoc[line], `${msg} (at: ${lines[line].trim()})`);
        } else {
            push(-1, msg);
        }
    }
    return errors;
}

function schema(files) {
    let bad = 0;
    for (const file of files) {
        let entries;
        try {
            entries = load(file);
        } catch (e) {
            console.log(`invalid: ${e.message}`);
            bad++;
            continue;
        }
        if (!entries.length) {
            console.log(`invalid: ${file}: no document`);
            bad++;
            continue;
        }
        const typeErrors = typesCheck(entries);
        for (const msg of typeErrors.get(-1) || []) {
            console.log(`invalid: ${file}: ${msg}`);
            bad++;
        }
        entries.forEach((e, n) => {
            const where = `${label(e.obj)} (${file}, document ${e.index})`;
            const errs = [
                ...modelsCheck(e.obj).map((m) => `schema: ${m}`),
                ...(typeErrors.get(n) || []).map((m) => `types: ${m}`),
            ];
            if (!errs.length) {
                console.log(`valid: ${where}`);
                return;
            }
            bad++;
            console.log(`invalid: ${where}`);
            for (const m of errs)
                console.log(`  ${m}`);
        });
    }
    return bad ? 1 : 0;
}

function volumeSource(v) {
    if (!v)
        return "none";
    if (v.hostPath)
        return `hostPath:${v.hostPath.path}:${v.hostPath.type || ""}`;
    if (v.configMap)
        return `configMap:${v.configMap.name}`;
    if (v.emptyDir)
        return "emptyDir";
    return Object.keys(v).filter((k) => k !== "name").join(",");
}

function facts(file) {
    const sets = load(file).map((e) => e.obj).filter((o) => o && o.kind === "DaemonSet");
    if (sets.length !== 1)
        die(`${file}: ${sets.length} DaemonSets, expected one`);
    const ds = sets[0];
    const pod = (ds.spec && ds.spec.template && ds.spec.template.spec) || {};
    const out = [`daemonset ${ds.metadata.name}`];
    for (const k of ["hostPID", "hostNetwork", "hostIPC", "automountServiceAccountToken"])
        out.push(`${k} ${pod[k] === undefined ? "unset" : pod[k]}`);
    out.push(`priorityClassName ${pod.priorityClassName || "unset"}`);
    const psc = pod.securityContext || {};
    out.push(`pod.seccompProfile ${(psc.seccompProfile && psc.seccompProfile.type) || "unset"}`);
    const volumes = new Map((pod.volumes || []).map((v) => [v.name, v]));
    const containers = [...(pod.initContainers || []), ...(pod.containers || [])];
    out.push(`containers ${containers.map((c) => c.name).join(" ")}`);
    for (const c of containers) {
        const sc = c.securityContext || {};
        const caps = sc.capabilities || {};
        const p = `container ${c.name}`;
        out.push(`${p} privileged ${sc.privileged === undefined ? "unset" : sc.privileged}`);
        out.push(`${p} allowPrivilegeEscalation ${sc.allowPrivilegeEscalation === undefined ? "unset" : sc.allowPrivilegeEscalation}`);
        out.push(`${p} readOnlyRootFilesystem ${sc.readOnlyRootFilesystem === undefined ? "unset" : sc.readOnlyRootFilesystem}`);
        out.push(`${p} runAsUser ${sc.runAsUser === undefined ? "unset" : sc.runAsUser}`);
        out.push(`${p} seccompProfile ${(sc.seccompProfile && sc.seccompProfile.type) || "unset"}`);
        out.push(`${p} appArmorProfile ${(sc.appArmorProfile && sc.appArmorProfile.type) || "unset"}`);
        out.push(`${p} capabilities.drop ${(caps.drop || []).join(" ")}`);
        out.push(`${p} capabilities.add ${(caps.add || []).join(" ")}`);
        out.push(`${p} command ${JSON.stringify([...(c.command || []), ...(c.args || [])])}`);
        for (const m of c.volumeMounts || [])
            out.push(`${p} mount ${m.mountPath} volume=${m.name} readOnly=${m.readOnly === true} ` +
                `propagation=${m.mountPropagation || "None"} source=${volumeSource(volumes.get(m.name))}`);
    }
    console.log(out.join("\n"));
    return 0;
}

function data(file, name, key) {
    const cms = load(file).map((e) => e.obj).filter((o) => o && o.kind === "ConfigMap" && o.metadata && o.metadata.name === name);
    if (cms.length !== 1 || !cms[0].data || typeof cms[0].data[key] !== "string")
        die(`${file}: no ConfigMap ${name} with data key ${key}`);
    process.stdout.write(cms[0].data[key]);
    return 0;
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "schema" && args.length)
    process.exit(schema(args));
else if (cmd === "facts" && args.length === 1)
    process.exit(facts(args[0]));
else if (cmd === "data" && args.length === 3)
    process.exit(data(args[0], args[1], args[2]));
die("usage: validate.js schema FILE... | facts FILE | data FILE CONFIGMAP KEY");
