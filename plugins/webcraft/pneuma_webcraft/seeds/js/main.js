// The sign-up button shows a thank-you note instead of leaving the page.
document.getElementById("signup")?.addEventListener("click", (event) => {
  event.preventDefault();
  document.getElementById("signup-note").hidden = false;
});
