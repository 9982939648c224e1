// Signed-out pages: log in (with remember-me), register (personal or professional with SIRET, checked against the
// business registry), forgot password, and the reset page the e-mailed link opens (/reset-password?token=…).
import { api, type User } from "../api.ts"
import { announce, link, navigate, setTitle, setUser, type View } from "../app.ts"
import { field, h } from "../dom.ts"
import { language, t } from "../i18n.ts"
import { applyPreferences } from "../prefs.ts"
import { errorBox, run } from "../ui.ts"

const card = (...children: Array<Node | null>) => h("div", { class: "auth-card card" }, ...children)

/** Only local paths: `?next=` must not send the user to another site. */
const safeNext = (next: string | null): string => (next !== null && /^\/(?!\/)/.test(next) ? next : "/")

export const loginView: View = ({ root, query }) => {
  setTitle("auth.login.title")
  const email = h("input", { type: "email", name: "email", autocomplete: "username", required: true, "data-testid": "login-email" })
  const password = h("input", { type: "password", name: "password", autocomplete: "current-password", required: true, "data-testid": "login-password" })
  const remember = h("input", { type: "checkbox", name: "rememberMe", id: "login-remember", "data-testid": "login-remember" })
  const errors = errorBox("login-error")
  const form = h("form", { novalidate: false, "data-testid": "login-form" },
    field(t("auth.email"), email),
    field(t("auth.password"), password),
    h("div", { class: "check" }, remember, h("label", { for: "login-remember" }, t("auth.rememberMe"))),
    errors.el,
    h("button", { type: "submit", class: "primary", "data-testid": "login-submit" }, t("auth.login.submit")))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    void run(form, async () => {
      const { user } = await api.post<{ user: User }>("/api/auth/login", {
        email: email.value.trim(),
        password: password.value,
        rememberMe: remember.checked
      }, { anonymous: true })
      setUser(user)
      navigate(safeNext(query.get("next")), { replace: true })
    }, { errors })
  })
  root.append(card(
    h("h1", {}, t("auth.login.title")),
    query.get("reset") === "1" ? h("div", { class: "success-box", role: "status", "data-testid": "reset-done" }, t("auth.reset.done")) : null,
    form,
    h("p", {}, link("/forgot-password", t("auth.login.forgot"), { "data-testid": "link-forgot" })),
    h("p", {}, `${t("auth.login.noAccount")} `, link("/register", t("nav.register"), { "data-testid": "link-register" }))
  ))
}

export const registerView: View = ({ root }) => {
  setTitle("auth.register.title")
  const personal = h("input", { type: "radio", name: "accountType", value: "personal", id: "type-personal", checked: true, "data-testid": "register-type-personal" })
  const professional = h("input", { type: "radio", name: "accountType", value: "professional", id: "type-professional", "data-testid": "register-type-professional" })
  const firstName = h("input", { type: "text", name: "firstName", autocomplete: "given-name", required: true, maxlength: 100, "data-testid": "register-first-name" })
  const lastName = h("input", { type: "text", name: "lastName", autocomplete: "family-name", required: true, maxlength: 100, "data-testid": "register-last-name" })
  const email = h("input", { type: "email", name: "email", autocomplete: "email", required: true, "data-testid": "register-email" })
  const password = h("input", { type: "password", name: "password", autocomplete: "new-password", required: true, minlength: 8, "data-testid": "register-password" })
  const siret = h("input", { type: "text", name: "siret", inputmode: "numeric", autocomplete: "off", maxlength: 20, "data-testid": "register-siret" })
  const siretField = field(t("auth.siret"), siret, t("auth.siretHint"))
  const errors = errorBox("register-error")
  const syncType = () => {
    siretField.hidden = !professional.checked
    siret.required = professional.checked
  }
  personal.addEventListener("change", syncType)
  professional.addEventListener("change", syncType)
  syncType()
  const form = h("form", { "data-testid": "register-form" },
    h("fieldset", { class: "radios" },
      h("legend", {}, t("auth.accountType")),
      h("div", { class: "check" }, personal, h("label", { for: "type-personal" }, t("auth.personal"))),
      h("div", { class: "check" }, professional, h("label", { for: "type-professional" }, t("auth.professional")))),
    siretField,
    h("div", { class: "grid-2" }, field(t("auth.firstName"), firstName), field(t("auth.lastName"), lastName)),
    field(t("auth.email"), email),
    field(t("auth.password"), password, t("auth.passwordHint")),
    errors.el,
    h("button", { type: "submit", class: "primary", "data-testid": "register-submit" }, t("auth.register.submit")))
  const done = h("div", { class: "success-box", role: "status", "data-testid": "register-success", hidden: true })
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    void run(form, async () => {
      const pro = professional.checked
      const { user } = await api.post<{ user: User }>("/api/auth/register", {
        email: email.value.trim(),
        password: password.value,
        accountType: pro ? "professional" : "personal",
        firstName: firstName.value.trim(),
        lastName: lastName.value.trim(),
        ...(pro ? { siret: siret.value.replace(/\s+/g, "") } : {}),
        language: language()
      }, { anonymous: true })
      // The registry's answer: the company name it returned for this SIRET.
      done.textContent = user.companyName === undefined
        ? t("auth.register.created")
        : t("auth.register.createdCompany", { company: user.companyName })
      if (user.companyName !== undefined) done.dataset["company"] = user.companyName
      done.hidden = false
      form.hidden = true
      loginLink.hidden = false
      loginLink.focus()
    }, { errors })
  })
  const loginLink = link("/login", t("nav.login"), { "data-testid": "register-login-link", class: "button primary" })
  loginLink.hidden = true
  root.append(card(
    h("h1", {}, t("auth.register.title")),
    form,
    done,
    loginLink,
    h("p", {}, `${t("auth.register.haveAccount")} `, link("/login", t("nav.login"), { "data-testid": "link-login" }))
  ))
}

export const forgotView: View = ({ root }) => {
  setTitle("auth.forgot.title")
  const email = h("input", { type: "email", name: "email", autocomplete: "email", required: true, "data-testid": "forgot-email" })
  const errors = errorBox("forgot-error")
  const sent = h("div", { class: "success-box", role: "status", "data-testid": "forgot-sent", hidden: true }, t("auth.forgot.sent"))
  const form = h("form", { "data-testid": "forgot-form" },
    field(t("auth.email"), email),
    errors.el,
    h("button", { type: "submit", class: "primary", "data-testid": "forgot-submit" }, t("auth.forgot.submit")))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    void run(form, async () => {
      await api.post("/api/auth/forgot-password", { email: email.value.trim() }, { anonymous: true })
      sent.hidden = false
    }, { errors })
  })
  root.append(card(h("h1", {}, t("auth.forgot.title")), h("p", {}, t("auth.forgot.intro")), form, sent,
    h("p", {}, link("/login", t("nav.login")))))
}

export const resetView: View = ({ root, query }) => {
  setTitle("auth.reset.title")
  const token = query.get("token") ?? ""
  if (token === "") {
    root.append(card(h("h1", {}, t("auth.reset.title")),
      h("div", { class: "error-box", role: "alert", "data-testid": "reset-error" }, t("auth.reset.noToken")),
      h("p", {}, link("/forgot-password", t("auth.forgot.title")))))
    return
  }
  const password = h("input", { type: "password", name: "password", autocomplete: "new-password", required: true, minlength: 8, "data-testid": "reset-password" })
  const errors = errorBox("reset-error")
  const form = h("form", { "data-testid": "reset-form" },
    field(t("auth.newPassword"), password, t("auth.passwordHint")),
    errors.el,
    h("button", { type: "submit", class: "primary", "data-testid": "reset-submit" }, t("auth.reset.submit")))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    void run(form, async () => {
      await api.post("/api/auth/reset-password", { token, password: password.value }, { anonymous: true })
      announce(t("auth.reset.done"))
      // The token leaves the address bar (and the history) once used.
      navigate("/login?reset=1", { replace: true })
    }, { errors })
  })
  root.append(card(h("h1", {}, t("auth.reset.title")), form))
}

export const logout = async (): Promise<void> => {
  try {
    await api.post("/api/auth/logout", undefined, { anonymous: true })
  } finally {
    setUser(null)
    applyPreferences(false)
    announce(t("auth.loggedOut"))
    navigate("/login", { replace: true })
  }
}
