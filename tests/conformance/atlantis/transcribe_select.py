# Transcribes runatlantis/atlantis server/events/project_command_builder_test.go (078d0a8):
# TestDefaultProjectCommandBuilder_BuildSinglePlanApplyCommand (the plan half) and
# TestDefaultProjectCommandBuilder_WrongWorkspaceName. The repository holds `main.tf` at its
# root, the PR changes it, and the server allows every repository setting.
import json
T="TestDefaultProjectCommandBuilder_BuildSinglePlanApplyCommand"
def one(dir, ws, name=None, reqs=None, **kw):
    d={"kind":"ok","projects":[{"dir":dir,"workspace":ws,"name":name,"apply_requirements":reqs or []}]}
    d.update(kw); return d
C=[
 {"test":T,"description":"no atlantis.yaml","yaml":None,"comment":"atlantis plan -d . -w myworkspace -- commentarg","expect":one(".","myworkspace"),"atoll":"not_yet:extra-args"},
 {"test":T,"description":"no atlantis.yaml with project flag","yaml":None,"comment":"atlantis plan -p myproject","expect":{"kind":"error"}},
 {"test":T,"description":"simple atlantis.yaml","yaml":"version: 3\nprojects:\n- dir: .\n  workspace: myworkspace\n  apply_requirements: [approved]","comment":"atlantis plan -d . -w myworkspace","expect":one(".","myworkspace",reqs=["approved"])},
 {"test":T,"description":"atlantis.yaml wrong dir","yaml":"version: 3\nprojects:\n- dir: notroot\n  workspace: myworkspace\n  apply_requirements: [approved]","comment":"atlantis plan -d . -w myworkspace","expect":one(".","myworkspace")},
 {"test":T,"description":"atlantis.yaml wrong workspace","yaml":"version: 3\nprojects:\n- dir: .\n  workspace: notmyworkspace\n  apply_requirements: [approved]","comment":"atlantis plan -d . -w myworkspace","expect":{"kind":"error","mentions":["only configured for the following workspaces: `notmyworkspace`"]}},
 {"test":T,"description":"atlantis.yaml with projectname","yaml":"version: 3\nprojects:\n- name: myproject\n  dir: .\n  workspace: myworkspace\n  apply_requirements: [approved]","comment":"atlantis plan -p myproject","expect":one(".","myworkspace","myproject",["approved"])},
 {"test":T,"description":"atlantis.yaml with mergeable apply requirement","yaml":"version: 3\nprojects:\n- name: myproject\n  dir: .\n  workspace: myworkspace\n  apply_requirements: [mergeable]","comment":"atlantis plan -p myproject","expect":one(".","myworkspace","myproject",["mergeable"])},
 {"test":T,"description":"atlantis.yaml with mergeable and approved apply requirements","yaml":"version: 3\nprojects:\n- name: myproject\n  dir: .\n  workspace: myworkspace\n  apply_requirements: [mergeable, approved]","comment":"atlantis plan -p myproject","expect":one(".","myworkspace","myproject",["mergeable","approved"])},
 {"test":T,"description":"atlantis.yaml with multiple dir/workspaces matching","yaml":"version: 3\nprojects:\n- name: myproject\n  dir: .\n  workspace: myworkspace\n  apply_requirements: [approved]\n- name: myproject2\n  dir: .\n  workspace: myworkspace\n","comment":"atlantis plan -d . -w myworkspace","expect":{"kind":"error","mentions":["must specify project name","`myproject`, `myproject2`"]}},
 {"test":T,"description":"atlantis.yaml with project flag not matching","yaml":"version: 3\nprojects:\n- dir: .\n","comment":"atlantis plan -p notconfigured","expect":{"kind":"error","mentions":["notconfigured"]}},
 {"test":T,"description":"atlantis.yaml with ParallelPlan Set to true","yaml":"version: 3\nparallel_plan: true\nprojects:\n- name: myproject\n  dir: .\n  workspace: myworkspace\n","comment":"atlantis plan -p myproject","expect":one(".","myworkspace","myproject",parallel_plan=True,parallel_apply=False)},
 {"test":T,"description":"atlantis.yaml with ParallelPlan/apply and Automerge not set, but set in user conf","yaml":"version: 3\nprojects:\n- name: myproject\n  dir: .\n  workspace: myworkspace\n","comment":"atlantis plan -p myproject","server":"parallel_plan, parallel_apply and automerge on","expect":one(".","myworkspace","myproject",parallel_plan=True,parallel_apply=True)},
 {"test":T,"description":"atlantis.yaml with ParallelPlan/apply and Automerge set to false, but set to true in user conf","yaml":"version: 3\nautomerge: false\nparallel_plan: false\nparallel_apply: false\nprojects:\n- name: myproject\n  dir: .\n  workspace: myworkspace\n","comment":"atlantis plan -p myproject","server":"parallel_plan, parallel_apply and automerge on","expect":one(".","myworkspace","myproject",parallel_plan=False,parallel_apply=False)},
 {"test":"TestDefaultProjectCommandBuilder_WrongWorkspaceName","description":"wrong workspace name","yaml":"version: 3\nprojects:\n- dir: .\n  workspace: default\n- dir: .\n  workspace: staging\n","comment":"atlantis plan -d . -w notconfigured","expect":{"kind":"error","mentions":["running commands in workspace `notconfigured` is not allowed because this directory is only configured for the following workspaces: `default`, `staging`"]}},
]
json.dump({"source":"runatlantis/atlantis server/events/project_command_builder_test.go (BuildSinglePlanApplyCommand, plan half; WrongWorkspaceName). Left out: cases that set -p with -d/-w through the API and the server's silence-no-projects option, which no comment can express.","atlantis_commit":"078d0a82081e8a2b1645268c5f5bfec578246fa9","cases":C}, open("tests/conformance/atlantis/select.json","w"), indent=1)
print(len(C))
