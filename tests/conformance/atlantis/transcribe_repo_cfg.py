# Transcribes atlantis.yaml cases of runatlantis/atlantis (078d0a8) into data.
import json, os, re, subprocess
# A git clone of runatlantis/atlantis at 078d0a8; run from the atoll repository root.
G=os.environ.get("ATLANTIS_REPO", "../atlantis")
def show(path): return subprocess.run(["git","-C",G,"show","HEAD:"+path],capture_output=True,text=True).stdout
def func_body(src, name):
    start=src.index("func "+name+"(")
    end=src.index("\n}\n", start)
    return src[start:end]
def cases(body):
    # case blocks open with two tabs and `{` and close with two tabs and `},`
    return re.findall(r"\n\t\t\{\n(.*?)\n\t\t\},", body, re.S)
def go_str(s): return json.loads('"'+s+'"')
def desc_of(block):
    m=re.search(r'description:\s*"((?:\\.|[^"\\])*)"', block) or re.search(r'description:\s*`([^`]*)`', block)
    return m.group(1)
def err_of(block):
    m=re.search(r'expErr:\s*"((?:\\.|[^"\\])*)"', block)
    if m: return go_str(m.group(1)) or None
    m=re.search(r'expErr:\s*`([^`]*)`', block)
    return m.group(1) if m and m.group(1) else None
out=[]
src=show("server/core/config/parser_validator_test.go")
for block in cases(func_body(src,"TestParseRepoCfg")):
    desc=desc_of(block)
    m=re.search(r"input:\s*`(.*?)`", block, re.S)
    yaml=m.group(1)
    err=err_of(block)
    if err:
        exp={"kind":"error"}
    else:
        exp={"kind":"ok"}
        pm=re.search(r"Projects: \[\]valid\.Project\{\n(.*?)\n\t\t\t\t\},", block, re.S)
        if pm:
            projects=[]
            for p in re.split(r"\n\t\t\t\t\t\},?\n?", pm.group(1)):
                if "Dir:" not in p: continue
                d={}
                d["dir"]=re.search(r'Dir:\s*"([^"]*)"',p).group(1)
                w=re.search(r'Workspace:\s*"([^"]*)"',p); d["workspace"]=w.group(1) if w else "default"
                n=re.search(r'(?m)^\s*Name:\s*String\("([^"]*)"\)',p); d["name"]=n.group(1) if n else None
                e=re.search(r'Enabled:\s*(true|false)',p)
                if e: d["autoplan"]= e.group(1)=="true"
                a=re.search(r'ApplyRequirements:\s*\[\]string\{([^}]*)\}',p)
                if a: d["apply_requirements"]=re.findall(r'"([^"]*)"',a.group(1))
                projects.append(d)
            exp["projects"]=projects
        elif "Projects:" not in block:
            exp["projects"]=[]
    out.append({"test":"TestParseRepoCfg","description":desc,"yaml":yaml,"expect":exp,"atlantis_error":err})

# raw.Project Validate cases: Go struct literals written out as one project of a version 3 file.
STR_RE=r'"((?:\\.|[^"\\])*)"'
FIELDS={"Name":"name","Branch":"branch","Dir":"dir","Workspace":"workspace","Workflow":"workflow","TerraformVersion":"terraform_version","TerraformDistribution":"terraform_distribution","PlanRequirements":"plan_requirements","ApplyRequirements":"apply_requirements","ImportRequirements":"import_requirements","DependsOn":"depends_on","ExecutionOrderGroup":"execution_order_group"}
src=show("server/core/config/raw/project_test.go")
for block in cases(func_body(src,"TestProject_Validate")):
    desc=desc_of(block)
    im=re.search(r"input: raw\.Project\{(.*?)\n\t\t\t\},", block, re.S)
    lines=[]
    unknown=False
    for f,v in re.findall(r"(\w+):\s*(.*?),\n", im.group(1)+"\n"):
        if f not in FIELDS: unknown=True; continue
        if v=="nil": continue
        s=re.match(r'String\((".*")\)$',v)
        bt=re.match(r'String\(`(.*)`\)$',v)
        if bt: lines.append(f"{FIELDS[f]}: {json.dumps(bt.group(1))}"); continue
        l=re.match(r'\[\]string\{(.*)\}$',v)
        i=re.match(r'Int\((\d+)\)$',v)
        if s: lines.append(f"{FIELDS[f]}: {json.dumps(go_str(s.group(1)[1:-1]))}")
        elif l:
            items=[go_str(x) for x in re.findall(STR_RE, l.group(1))]
            lines.append(FIELDS[f]+": "+json.dumps(items))
        elif i: lines.append(f"{FIELDS[f]}: {i.group(1)}")
        else: unknown=True
    if unknown: print("skipped", desc); continue
    yaml="version: 3\nprojects:\n- " + ("\n  ".join(lines) if lines else "{}")
    err=err_of(block)
    out.append({"test":"TestProject_Validate","description":desc,"yaml":yaml,"expect":{"kind":"error" if err else "ok"},"atlantis_error":err})

# raw.Autoplan unmarshal cases, each as the autoplan of one project.
src=show("server/core/config/raw/autoplan_test.go")
for block in cases(func_body(src,"TestAutoPlan_UnmarshalYAML")):
    desc=desc_of(block)
    m=re.search(r"input:\s*`(.*?)`", block, re.S) or re.search(r'input:\s*"(.*?)"', block)
    body=m.group(1).strip("\n")
    en=re.search(r"Enabled:\s*Bool\((true|false)\)", block)
    yaml="version: 3\nprojects:\n- dir: .\n  autoplan:" + ("".join("\n    "+l for l in body.split("\n")) if body.strip() else "")
    exp={"kind":"ok","projects":[{"dir":".","autoplan": en.group(1)=="true" if en else True}]}
    out.append({"test":"TestAutoPlan_UnmarshalYAML","description":desc,"yaml":yaml,"expect":exp,"atlantis_error":None})

MARKERS=json.load(open("tests/conformance/atlantis/repo_cfg_markers.json"))
for c in out:
    m=MARKERS.get(c["test"]+"/"+c["description"])
    if m: c["atoll"]=m
print(len(out))
json.dump({"source":"runatlantis/atlantis server/core/config/parser_validator_test.go (TestParseRepoCfg), server/core/config/raw/project_test.go (TestProject_Validate), server/core/config/raw/autoplan_test.go (TestAutoPlan_UnmarshalYAML)","atlantis_commit":"078d0a82081e8a2b1645268c5f5bfec578246fa9","cases":out}, open("tests/conformance/atlantis/repo_cfg.json","w"), indent=1)
