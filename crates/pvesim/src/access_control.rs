//! Users, groups, roles, ACL entries and API tokens (`user.cfg`, `PVE::API2::User`, `Group`,
//! `Role`, `ACL`): what they hold, the checks and the messages PVE gives, wrapped as
//! `lock_user_config` wraps them (`create user failed: ...`). The built-in roles come from
//! [`model::access`]. A token's secret lives in [`crate::auth::Auth`], which authenticates
//! with it; this model keeps what the API shows of the token.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::firewall::spec::{self, Field};
use crate::routes::Params;

/// One user.
#[derive(Debug, Clone, Default)]
pub(crate) struct User {
    pub(crate) enable: bool,
    pub(crate) expire: u64,
    pub(crate) text: BTreeMap<&'static str, String>,
    pub(crate) groups: BTreeSet<String>,
    pub(crate) tokens: BTreeMap<String, Token>,
}

/// What the API shows of a token (its secret is [`crate::auth::Auth`]'s).
#[derive(Debug, Clone, Default)]
pub(crate) struct Token {
    pub(crate) comment: Option<String>,
    pub(crate) expire: Option<u64>,
    pub(crate) privsep: bool,
}

/// One ACL entry's key: path, subject type (`user`, `group`, `token`), subject, role.
type AclKey = (String, &'static str, String, String);

/// The access control configuration.
#[derive(Debug, Clone, Default)]
pub(crate) struct AccessControl {
    pub(crate) users: BTreeMap<String, User>,
    /// Groups by id, with their comment.
    pub(crate) groups: BTreeMap<String, Option<String>>,
    /// Roles made through the API (the built-in ones are [`model::access::builtin_roles`]).
    pub(crate) roles: BTreeMap<String, BTreeSet<String>>,
    /// ACL entries, each with its `propagate`.
    pub(crate) acl: BTreeMap<AclKey, bool>,
}

fn format_userid(v: &str) -> Result<(), String> {
    model::access::check_userid(v)
}
fn format_groupid(v: &str) -> Result<(), String> {
    if model::access::is_group_or_role(v) {
        Ok(())
    } else {
        Err(format!("group name '{v}' contains invalid characters"))
    }
}
fn format_roleid(v: &str) -> Result<(), String> {
    if model::access::is_group_or_role(v) {
        Ok(())
    } else {
        Err(format!("role name '{v}' contains invalid characters"))
    }
}
fn format_privs(v: &str) -> Result<(), String> {
    match crate::propstr::split_list(v)
        .into_iter()
        .find(|p| !model::access::is_privilege(p))
    {
        Some(p) => Err(format!("invalid privilege '{p}'")),
        None => Ok(()),
    }
}
fn format_groups(v: &str) -> Result<(), String> {
    crate::propstr::split_list(v)
        .into_iter()
        .try_for_each(|g| format_groupid(&g))
}
fn format_tokens(v: &str) -> Result<(), String> {
    crate::propstr::split_list(v)
        .into_iter()
        .try_for_each(|t| model::access::split_tokenid(&t).map(|_| ()))
}

pub(crate) const USERID: Field = Field::str("userid").max_len(64).format(format_userid);
pub(crate) const GROUPID: Field = Field::str("groupid").format(format_groupid);
pub(crate) const ROLEID: Field = Field::str("roleid").format(format_roleid);
pub(crate) const TOKENID: Field = Field::str("tokenid").pattern(model::access::is_realm);
const PRIVS: Field = Field::str("privs").format(format_privs);
const COMMENT: Field = Field::str("comment");
const USER_FIELDS: &[Field] = &[
    Field::boolean("enable"),
    Field::int("expire", Some(0), None),
    Field::str("firstname").max_len(1024),
    Field::str("lastname").max_len(1024),
    Field::str("email").max_len(254),
    Field::str("comment").max_len(2048),
    Field::str("keys"),
    Field::str("groups").format(format_groups),
];
const TOKEN_FIELDS: &[Field] = &[
    Field::int("expire", Some(0), None),
    Field::boolean("privsep"),
    COMMENT,
];

/// The user's text fields, as PVE names them.
const USER_TEXT: &[&str] = &["firstname", "lastname", "email", "comment", "keys"];

fn fields(base: &[Field], more: &[Field]) -> Vec<Field> {
    base.iter().chain(more).copied().collect()
}

fn die(what: &str, msg: impl std::fmt::Display) -> ApiError {
    ApiError::die(format!("{what}: {msg}"))
}

impl AccessControl {
    /// The users and tokens a scenario names (`user@realm`, `user@realm!token`).
    pub(crate) fn seeded<'a>(
        users: impl IntoIterator<Item = &'a String>,
        tokens: impl IntoIterator<Item = &'a String>,
    ) -> Self {
        let mut access = Self::default();
        for user in users {
            access.users.entry(user.clone()).or_insert_with(|| User {
                enable: true,
                ..User::default()
            });
        }
        for full in tokens {
            if let Some((user, token)) = full.rsplit_once('!') {
                let entry = access.users.entry(user.to_owned()).or_insert_with(|| User {
                    enable: true,
                    ..User::default()
                });
                entry.tokens.insert(
                    token.to_owned(),
                    Token {
                        privsep: false,
                        ..Token::default()
                    },
                );
            }
        }
        access
    }

    /// A role's privileges, built-in or made.
    pub(crate) fn role(&self, role: &str) -> Option<BTreeSet<String>> {
        if let Some(made) = self.roles.get(role) {
            return Some(made.clone());
        }
        model::access::builtin_roles()
            .into_iter()
            .find(|(name, _)| name == role)
            .map(|(_, privs)| privs.into_iter().map(str::to_owned).collect())
    }

    fn user(&self, userid: &str) -> ApiResult<&User> {
        self.users
            .get(userid)
            .ok_or_else(|| ApiError::die(format!("no such user ('{userid}')")))
    }

    /// `GET /access/users/{userid}`.
    pub(crate) fn read_user(&self, userid: &str) -> ApiResult<Value> {
        let user = self.user(userid)?;
        let mut v = user_json(user);
        v["groups"] = json!(user.groups.iter().collect::<Vec<_>>());
        let tokens: serde_json::Map<String, Value> = user
            .tokens
            .iter()
            .map(|(id, t)| (id.clone(), token_json(t)))
            .collect();
        v["tokens"] = Value::Object(tokens);
        Ok(v)
    }

    /// `GET /access/users`: every user, groups as a list, tokens with their ids.
    pub(crate) fn list_users(&self) -> Value {
        let list = self.users.iter().map(|(id, user)| {
            let mut v = user_json(user);
            v["userid"] = json!(id);
            v["realm-type"] = json!(id.rsplit_once('@').map(|(_, r)| r).unwrap_or_default());
            if !user.groups.is_empty() {
                let groups: Vec<&str> = user.groups.iter().map(String::as_str).collect();
                v["groups"] = json!(groups.join(","));
            }
            let tokens: Vec<Value> = user
                .tokens
                .iter()
                .map(|(tid, t)| {
                    let mut t = token_json(t);
                    t["tokenid"] = json!(tid);
                    t
                })
                .collect();
            v["tokens"] = Value::Array(tokens);
            v
        });
        Value::Array(list.collect())
    }

    /// `POST /access/users`.
    pub(crate) fn create_user(&mut self, params: &Params) -> ApiResult<()> {
        let password = Field::str("password").len(8, 64);
        let p = spec::check(params, &fields(&[USERID.required(), password], USER_FIELDS))?;
        let what = "create user failed";
        let userid = p.get("userid").cloned().unwrap_or_default();
        if self.users.contains_key(&userid) {
            return Err(die(what, format!("user '{userid}' already exists")));
        }
        let mut user = User {
            enable: p.get("enable").is_none_or(|e| e == "1"),
            expire: p.get("expire").and_then(|e| e.parse().ok()).unwrap_or(0),
            ..User::default()
        };
        self.set_groups(&mut user, p.get("groups"))
            .map_err(|e| die(what, e))?;
        for key in USER_TEXT {
            if let Some(v) = p.get(*key).filter(|v| !v.is_empty()) {
                user.text.insert(*key, v.clone());
            }
        }
        self.users.insert(userid, user);
        Ok(())
    }

    fn set_groups(&self, user: &mut User, groups: Option<&String>) -> Result<(), String> {
        let Some(groups) = groups else {
            return Ok(());
        };
        let mut set = BTreeSet::new();
        for group in crate::propstr::split_list(groups) {
            if !self.groups.contains_key(&group) {
                return Err(format!("no such group '{group}'"));
            }
            set.insert(group);
        }
        user.groups = set;
        Ok(())
    }

    /// `PUT /access/users/{userid}`.
    pub(crate) fn update_user(&mut self, userid: &str, params: &Params) -> ApiResult<()> {
        let userid = spec::check_path(&USERID, userid)?;
        let p = spec::check(params, &fields(USER_FIELDS, &[Field::boolean("append")]))?;
        if p.contains_key("append") && !p.contains_key("groups") {
            return Err(ApiError::param(
                "append",
                "missing property - 'append' requires this property",
            ));
        }
        let what = "update user failed";
        let mut user = self
            .user(&userid)
            .map_err(|e| die(what, e.message))?
            .clone();
        if let Some(e) = p.get("enable") {
            user.enable = e == "1";
        }
        if let Some(e) = p.get("expire") {
            user.expire = e.parse().unwrap_or(0);
        }
        if p.contains_key("groups") {
            let kept = if p.get("append").is_some_and(|a| a == "1") {
                user.groups.clone()
            } else {
                BTreeSet::new()
            };
            self.set_groups(&mut user, p.get("groups"))
                .map_err(|e| die(what, e))?;
            user.groups.extend(kept);
        }
        for key in USER_TEXT {
            if let Some(v) = p.get(*key) {
                user.text.insert(*key, v.clone());
            }
        }
        user.text.retain(|_, v| !v.is_empty());
        self.users.insert(userid, user);
        Ok(())
    }

    /// `DELETE /access/users/{userid}`: its tokens and ACL entries go with it. Answers the
    /// full ids of its tokens, whose secrets must go too.
    pub(crate) fn delete_user(&mut self, userid: &str) -> ApiResult<Vec<String>> {
        let userid = spec::check_path(&USERID, userid)?;
        let what = "delete user failed";
        let user = self
            .users
            .remove(&userid)
            .ok_or_else(|| die(what, format!("no such user ('{userid}')")))?;
        let tokens: Vec<String> = user
            .tokens
            .keys()
            .map(|t| format!("{userid}!{t}"))
            .collect();
        self.acl.retain(|(_, ty, ugid, _), _| match *ty {
            "user" => *ugid != userid,
            "token" => !tokens.contains(ugid),
            _ => true,
        });
        Ok(tokens)
    }

    /// `GET /access/groups/{groupid}`: comment and members.
    pub(crate) fn read_group(&self, groupid: &str) -> ApiResult<Value> {
        let groupid = spec::check_path(&GROUPID, groupid)?;
        let comment = self
            .groups
            .get(&groupid)
            .ok_or_else(|| ApiError::die(format!("group '{groupid}' does not exist")))?;
        let mut v = json!({ "members": self.members(&groupid) });
        if let Some(c) = comment {
            v["comment"] = json!(c);
        }
        Ok(v)
    }

    fn members(&self, group: &str) -> Vec<String> {
        self.users
            .iter()
            .filter(|(_, u)| u.groups.contains(group))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// `GET /access/groups`.
    pub(crate) fn list_groups(&self) -> Value {
        let list = self.groups.iter().map(|(id, comment)| {
            let mut v = json!({ "groupid": id, "users": self.members(id).join(",") });
            if let Some(c) = comment {
                v["comment"] = json!(c);
            }
            v
        });
        Value::Array(list.collect())
    }

    /// `POST /access/groups`.
    pub(crate) fn create_group(&mut self, params: &Params) -> ApiResult<()> {
        let p = spec::check(params, &[GROUPID.required(), COMMENT])?;
        let groupid = p.get("groupid").cloned().unwrap_or_default();
        if self.groups.contains_key(&groupid) {
            return Err(die(
                "create group failed",
                format!("group '{groupid}' already exists"),
            ));
        }
        let comment = p.get("comment").filter(|c| !c.is_empty()).cloned();
        self.groups.insert(groupid, comment);
        Ok(())
    }

    /// `PUT /access/groups/{groupid}`.
    pub(crate) fn update_group(&mut self, groupid: &str, params: &Params) -> ApiResult<()> {
        let groupid = spec::check_path(&GROUPID, groupid)?;
        let p = spec::check(params, &[COMMENT])?;
        let Some(comment) = self.groups.get_mut(&groupid) else {
            return Err(die(
                "update group failed",
                format!("group '{groupid}' does not exist"),
            ));
        };
        if let Some(c) = p.get("comment") {
            *comment = Some(c.clone()).filter(|c| !c.is_empty());
        }
        Ok(())
    }

    /// `DELETE /access/groups/{groupid}`: its members leave it, its ACL entries go.
    pub(crate) fn delete_group(&mut self, groupid: &str) -> ApiResult<()> {
        let groupid = spec::check_path(&GROUPID, groupid)?;
        if self.groups.remove(&groupid).is_none() {
            return Err(die(
                "delete group failed",
                format!("group '{groupid}' does not exist"),
            ));
        }
        for user in self.users.values_mut() {
            user.groups.remove(&groupid);
        }
        self.acl
            .retain(|(_, ty, ugid, _), _| !(*ty == "group" && *ugid == groupid));
        Ok(())
    }

    /// `GET /access/roles/{roleid}`: each privilege as `1`.
    pub(crate) fn read_role(&self, roleid: &str) -> ApiResult<Value> {
        let roleid = spec::check_path(&ROLEID, roleid)?;
        let privs = self
            .role(&roleid)
            .ok_or_else(|| ApiError::die(format!("role '{roleid}' does not exist")))?;
        let map: serde_json::Map<String, Value> =
            privs.into_iter().map(|p| (p, json!(1))).collect();
        Ok(Value::Object(map))
    }

    /// `GET /access/roles`.
    pub(crate) fn list_roles(&self) -> Value {
        let builtin = model::access::builtin_roles()
            .into_iter()
            .map(|(name, privs)| {
                let privs: Vec<&str> = privs.into_iter().collect();
                json!({ "roleid": name, "privs": privs.join(","), "special": 1 })
            });
        let made = self.roles.iter().map(|(name, privs)| {
            let privs: Vec<&str> = privs.iter().map(String::as_str).collect();
            json!({ "roleid": name, "privs": privs.join(","), "special": 0 })
        });
        Value::Array(builtin.chain(made).collect())
    }

    /// `POST /access/roles`.
    pub(crate) fn create_role(&mut self, params: &Params) -> ApiResult<()> {
        let p = spec::check(params, &[ROLEID.required(), PRIVS])?;
        let roleid = p.get("roleid").cloned().unwrap_or_default();
        if self.role(&roleid).is_some() {
            return Err(die(
                "create role failed",
                format!("role '{roleid}' already exists"),
            ));
        }
        let privs = split_privs(p.get("privs"));
        self.roles.insert(roleid, privs);
        Ok(())
    }

    /// `PUT /access/roles/{roleid}`: the privileges replaced, or added with `append`.
    pub(crate) fn update_role(&mut self, roleid: &str, params: &Params) -> ApiResult<()> {
        let roleid = spec::check_path(&ROLEID, roleid)?;
        let p = spec::check(params, &[PRIVS, Field::boolean("append")])?;
        if model::access::is_builtin_role(&roleid) {
            return Err(ApiError::die(format!(
                "auto-generated role '{roleid}' cannot be modified"
            )));
        }
        let Some(privs) = self.roles.get_mut(&roleid) else {
            return Err(die(
                "update role failed",
                format!("role '{roleid}' does not exist"),
            ));
        };
        if p.get("append").is_none_or(|a| a != "1") {
            privs.clear();
        }
        privs.extend(split_privs(p.get("privs")));
        Ok(())
    }

    /// `DELETE /access/roles/{roleid}`: its ACL entries go.
    pub(crate) fn delete_role(&mut self, roleid: &str) -> ApiResult<()> {
        let roleid = spec::check_path(&ROLEID, roleid)?;
        if model::access::is_builtin_role(&roleid) {
            return Err(ApiError::die(format!(
                "auto-generated role '{roleid}' cannot be deleted"
            )));
        }
        if self.roles.remove(&roleid).is_none() {
            return Err(die(
                "delete role failed",
                format!("role '{roleid}' does not exist"),
            ));
        }
        self.acl.retain(|(_, _, _, role), _| *role != roleid);
        Ok(())
    }

    /// `GET /access/acl`.
    pub(crate) fn list_acl(&self) -> Value {
        let list = self.acl.iter().map(|((path, ty, ugid, role), propagate)| {
            json!({
                "path": path, "type": ty, "ugid": ugid, "roleid": role,
                "propagate": u8::from(*propagate),
            })
        });
        Value::Array(list.collect())
    }

    /// `PUT /access/acl`: grants (or with `delete` takes away) roles on a path.
    pub(crate) fn update_acl(&mut self, params: &Params) -> ApiResult<()> {
        let p = spec::check(
            params,
            &[
                Field::str("path").required(),
                Field::str("roles").required(),
                Field::str("users"),
                Field::str("groups").format(format_groups),
                Field::str("tokens").format(format_tokens),
                Field::boolean("propagate"),
                Field::boolean("delete"),
            ],
        )?;
        let list = |k: &str| -> Vec<String> {
            p.get(k)
                .map(|v| crate::propstr::split_list(v))
                .unwrap_or_default()
        };
        let (users, groups, tokens) = (list("users"), list("groups"), list("tokens"));
        if users.is_empty() && groups.is_empty() && tokens.is_empty() {
            let msg = "either 'users', 'groups' or 'tokens' is required.";
            let errors = ["users", "groups", "tokens"]
                .into_iter()
                .map(|k| (k.to_owned(), msg.to_owned()))
                .collect();
            return Err(ApiError::params(errors));
        }
        let raw = p.get("path").cloned().unwrap_or_default();
        let path = normalize_path(&raw);
        let delete = p.get("delete").is_some_and(|d| d == "1");
        if path.is_empty() || (!delete && !model::access::is_acl_path(&path)) {
            return Err(ApiError::param("path", format!("invalid ACL path '{raw}'")));
        }
        let propagate = p.get("propagate").is_none_or(|v| v == "1");
        let what = "ACL update failed";
        let mut next = self.acl.clone();
        for role in list("roles") {
            if self.role(&role).is_none() {
                return Err(die(what, format!("role '{role}' does not exist")));
            }
            let mut subjects: Vec<(&'static str, String)> = Vec::new();
            for group in &groups {
                if !self.groups.contains_key(group) {
                    return Err(die(what, format!("group '{group}' does not exist")));
                }
                subjects.push(("group", group.clone()));
            }
            for user in &users {
                model::access::check_userid(user).map_err(|e| die(what, e))?;
                if !self.users.contains_key(user) {
                    return Err(die(what, format!("user '{user}' does not exist")));
                }
                subjects.push(("user", user.clone()));
            }
            for token in &tokens {
                let (user, id) = model::access::split_tokenid(token).map_err(|_| {
                    die(
                        what,
                        format!(
                            "'{token}' is not a valid token ID - not able to split into user and token parts"
                        ),
                    )
                })?;
                let known = self
                    .users
                    .get(user)
                    .is_some_and(|u| u.tokens.contains_key(id));
                if !known {
                    return Err(die(what, format!("no such token '{id}' for user '{user}'")));
                }
                subjects.push(("token", token.clone()));
            }
            for (ty, ugid) in subjects {
                let key = (path.clone(), ty, ugid, role.clone());
                if delete {
                    next.remove(&key);
                } else {
                    next.insert(key, propagate);
                }
            }
        }
        self.acl = next;
        Ok(())
    }

    /// `GET /access/users/{userid}/token/{tokenid}`.
    pub(crate) fn read_token(&self, userid: &str, tokenid: &str) -> ApiResult<Value> {
        let (userid, tokenid) = token_path(userid, tokenid)?;
        let user = self.user(&userid)?;
        let token = user.tokens.get(&tokenid).ok_or_else(|| {
            ApiError::die(format!("no such token '{tokenid}' for user '{userid}'"))
        })?;
        Ok(token_json(token))
    }

    /// `POST /access/users/{userid}/token/{tokenid}`: answers the full id; the caller makes
    /// the secret.
    pub(crate) fn create_token(
        &mut self,
        userid: &str,
        tokenid: &str,
        params: &Params,
    ) -> ApiResult<(String, Value)> {
        let (userid, tokenid) = token_path(userid, tokenid)?;
        let p = spec::check(params, TOKEN_FIELDS)?;
        let user = self.user(&userid)?;
        if user.tokens.contains_key(&tokenid) {
            return Err(ApiError::param("tokenid", "Token already exists."));
        }
        let token = Token {
            comment: p.get("comment").filter(|c| !c.is_empty()).cloned(),
            expire: p.get("expire").and_then(|e| e.parse().ok()),
            privsep: p.get("privsep").is_none_or(|v| v == "1"),
        };
        let info = token_json(&token);
        if let Some(user) = self.users.get_mut(&userid) {
            user.tokens.insert(tokenid.clone(), token);
        }
        Ok((format!("{userid}!{tokenid}"), info))
    }

    /// `PUT /access/users/{userid}/token/{tokenid}`.
    pub(crate) fn update_token(
        &mut self,
        userid: &str,
        tokenid: &str,
        params: &Params,
    ) -> ApiResult<Value> {
        let (userid, tokenid) = token_path(userid, tokenid)?;
        let p = spec::check(params, &fields(TOKEN_FIELDS, &[Field::str("delete")]))?;
        let missing = || ApiError::die(format!("no such token '{tokenid}' for user '{userid}'"));
        let token = self
            .users
            .get_mut(&userid)
            .and_then(|u| u.tokens.get_mut(&tokenid))
            .ok_or_else(missing)?;
        if let Some(d) = p.get("delete") {
            for key in crate::propstr::split_list(d) {
                if key != "comment" {
                    return Err(ApiError::param("delete", format!("unknown option '{key}'")));
                }
                token.comment = None;
            }
        }
        if let Some(v) = p.get("privsep") {
            token.privsep = v == "1";
        }
        if let Some(v) = p.get("expire") {
            token.expire = v.parse().ok();
        }
        if let Some(c) = p.get("comment") {
            token.comment = Some(c.clone()).filter(|c| !c.is_empty());
        }
        Ok(token_json(token))
    }

    /// `DELETE /access/users/{userid}/token/{tokenid}`: its ACL entries go. Answers the full
    /// id, whose secret must go too.
    pub(crate) fn delete_token(&mut self, userid: &str, tokenid: &str) -> ApiResult<String> {
        let (userid, tokenid) = token_path(userid, tokenid)?;
        let removed = self
            .users
            .get_mut(&userid)
            .and_then(|u| u.tokens.remove(&tokenid));
        if removed.is_none() {
            return Err(ApiError::die(format!(
                "no such token '{tokenid}' for user '{userid}'"
            )));
        }
        let full = format!("{userid}!{tokenid}");
        self.acl
            .retain(|(_, ty, ugid, _), _| !(*ty == "token" && *ugid == full));
        Ok(full)
    }
}

fn token_path(userid: &str, tokenid: &str) -> ApiResult<(String, String)> {
    Ok((
        spec::check_path(&USERID, userid)?,
        spec::check_path(&TOKENID, tokenid)?,
    ))
}

fn split_privs(privs: Option<&String>) -> BTreeSet<String> {
    privs
        .map(|p| crate::propstr::split_list(p).into_iter().collect())
        .unwrap_or_default()
}

/// `normalize_path`: one leading slash, no repeated or trailing ones.
fn normalize_path(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    format!("/{}", parts.join("/"))
}

fn user_json(user: &User) -> Value {
    let mut v = json!({ "enable": u8::from(user.enable), "expire": user.expire });
    for (k, text) in &user.text {
        v[*k] = json!(text);
    }
    v
}

fn token_json(token: &Token) -> Value {
    let mut v = json!({ "privsep": u8::from(token.privsep) });
    if let Some(e) = token.expire {
        v["expire"] = json!(e);
    }
    if let Some(c) = &token.comment {
        v["comment"] = json!(c);
    }
    v
}
