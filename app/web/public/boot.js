// Applies the theme before the first paint (the module script runs after it): the zh_theme cookie, else the
// system's preference. The panel's script refines it (professional area theme) once it knows the account.
(function () {
  var match = document.cookie.match(/(?:^|;\s*)zh_theme=(light|dark)(?:;|$)/)
  var dark = match ? match[1] === "dark" : window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches
  document.documentElement.setAttribute("data-theme", dark ? "dark" : "light")
  var lang = document.cookie.match(/(?:^|;\s*)zh_lang=(fr|en)(?:;|$)/)
  document.documentElement.lang = lang ? lang[1] : /^fr\b/i.test(navigator.language || "") ? "fr" : "en"
})()
