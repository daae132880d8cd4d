package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestPackageDeb builds the .deb from packaging/nfpm.yaml with the binaries
// built for this run (uncompressed, so that it takes seconds: `make
// package` compresses), unpacks it into a scratch root with dpkg-deb -x,
// and checks that every file is where it belongs, that xced runs from
// there, that the shipped xce.toml is valid and that the units pass
// systemd-analyze verify.
func TestPackageDeb(t *testing.T) {
	// Building nfpm from source takes minutes on a fresh machine: make
	// package runs this test after it builds the packages, make test
	// does not.
	if os.Getenv("XCE_TEST_PACKAGE") == "" {
		t.Skip("set XCE_TEST_PACKAGE=1 (make package does) to build and check the .deb")
	}
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("dpkg-deb is not installed: the .deb cannot be unpacked here")
	}
	repo, tmp := packageRepo(t), t.TempDir()
	deb := buildPackage(t, repo, tmp, "deb", "\ndeb:\n  compression: none\n")
	root := filepath.Join(tmp, "root")
	if out, err := exec.Command("dpkg-deb", "-x", deb, root).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -x: %v\n%s", err, out)
	}
	checkPackageTree(t, repo, root, "/usr/share/zsh/vendor-completions/")

	// The administrator's files are configuration files: an upgrade keeps
	// their edits.
	control := filepath.Join(tmp, "control")
	if out, err := exec.Command("dpkg-deb", "-e", deb, control).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -e: %v\n%s", err, out)
	}
	conffiles, err := os.ReadFile(filepath.Join(control, "conffiles"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range packageConfFiles {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(f) + `$`).Match(conffiles) {
			t.Errorf("%s is not a conffile:\n%s", f, conffiles)
		}
	}
}

// TestPackageRpm does for the .rpm what TestPackageDeb does for the .deb:
// built from the same packaging/nfpm.yaml, unpacked with rpm2cpio and
// cpio into a scratch root, every file checked there, and the
// administrator's files marked as configuration files (%config, kept
// across upgrades) in rpm's own listing. rpm and cpio are installed from
// the distribution's packages when missing and the test runs as root.
func TestPackageRpm(t *testing.T) {
	if os.Getenv("XCE_TEST_PACKAGE") == "" {
		t.Skip("set XCE_TEST_PACKAGE=1 (make package does) to build and check the .rpm")
	}
	needTools(t, map[string]string{"rpm": "rpm", "rpm2cpio": "rpm2cpio", "cpio": "cpio"})
	repo, tmp := packageRepo(t), t.TempDir()
	rpm := buildPackage(t, repo, tmp, "rpm", "")
	root := filepath.Join(tmp, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	unpack := exec.Command("sh", "-c", `rpm2cpio "$1" | cpio -idm --quiet`, "sh", rpm)
	unpack.Dir = root
	if out, err := unpack.CombinedOutput(); err != nil {
		t.Fatalf("rpm2cpio | cpio: %v\n%s", err, out)
	}
	// zsh's vendor completions are elsewhere on Red Hat's family.
	checkPackageTree(t, repo, root, "/usr/share/zsh/site-functions/")

	out, err := exec.Command("rpm", "-qp", "--queryformat", `[%{FILEFLAGS:fflags} %{FILENAMES}\n]`, rpm).CombinedOutput()
	if err != nil {
		t.Fatalf("rpm -qp: %v\n%s", err, out)
	}
	flags := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if f, name, ok := strings.Cut(line, " "); ok {
			flags[name] = f
		} else if line != "" {
			flags[line] = ""
		}
	}
	for _, f := range packageConfFiles {
		if !strings.Contains(flags[f], "c") || !strings.Contains(flags[f], "n") {
			t.Errorf("%s is not %%config(noreplace) in the .rpm (flags %q)", f, flags[f])
		}
	}
	if out, err := exec.Command("rpm", "-qp", "--queryformat", "%{NAME} %{VERSION}", rpm).CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "xce 0.0.0") {
		t.Errorf("rpm -qp name and version: %v: %s", err, out)
	}
}

// packageConfFiles are the files an administrator edits.
var packageConfFiles = []string{"/etc/xce/xce.toml", "/etc/xce/xced.env", "/etc/xce/xced-worker.env", "/etc/xce/xced-provisioner.env"}

func packageRepo(t *testing.T) string {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// needTools skips the test when a command it needs is missing and cannot
// be installed (tool -> the Debian package that has it): installing needs
// root and apt-get.
func needTools(t *testing.T, tools map[string]string) {
	var pkgs []string
	for tool, pkg := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			pkgs = append(pkgs, pkg)
		}
	}
	if len(pkgs) == 0 {
		return
	}
	if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
		t.Skipf("%v not installed, and they cannot be installed here (needs root and apt-get)", pkgs)
	}
	install := exec.Command("apt-get", append([]string{"install", "-y", "--no-install-recommends"}, pkgs...)...)
	install.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := install.CombinedOutput(); err != nil {
		t.Skipf("apt-get install %v: %v\n%s", pkgs, err, out)
	}
}

// buildPackage builds the package of the given kind from
// packaging/nfpm.yaml, with extra appended to it, from the binaries of
// this run, and returns its path.
func buildPackage(t *testing.T, repo, tmp, packager, extra string) string {
	def, err := os.ReadFile(filepath.Join(repo, "packaging", "nfpm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if section := strings.TrimSpace(extra); section != "" && bytes.Contains(def, []byte("\n"+strings.SplitN(section, "\n", 2)[0])) {
		t.Fatalf("packaging/nfpm.yaml has a %s section; this test appends its own", strings.SplitN(section, "\n", 2)[0])
	}
	conf := filepath.Join(tmp, "nfpm-"+packager+".yaml")
	if err := os.WriteFile(conf, append(def, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(tmp, "xce."+packager)
	nfpm := exec.Command("go", "run", nfpmModule(t, repo), "package", "--config", conf, "--packager", packager, "--target", pkg)
	nfpm.Dir = repo
	nfpm.Env = append(os.Environ(), "XCE_BIN="+binDir, "XCE_VERSION=0.0.0+test", "GOARCH="+runtime.GOARCH)
	if out, err := nfpm.CombinedOutput(); err != nil {
		t.Fatalf("nfpm %s: %v\n%s", packager, err, out)
	}
	return pkg
}

// checkPackageTree checks an unpacked package: every file where it
// belongs with its mode, xced runs from there and accepts the shipped
// xce.toml, and the units pass systemd-analyze verify. zsh is where the
// package's distribution has zsh look for completions.
func checkPackageTree(t *testing.T, repo, root, zsh string) {
	t.Helper()
	// Every binary of the build, executable, in /usr/bin.
	bins, _ := os.ReadDir(binDir)
	if len(bins) < len(commands)+3 {
		t.Fatalf("only %d binaries built", len(bins))
	}
	for _, b := range bins {
		mustMode(t, root, "/usr/bin/"+b.Name(), 0o755)
	}
	for _, name := range append([]string{"xced", "xce-shepherd", "xce-dial"}, commands...) {
		mustMode(t, root, "/usr/bin/"+name, 0o755)
	}
	// Every man page and completion of the repository.
	for _, pat := range []struct{ src, dst string }{
		{"man/man1/*.1", "/usr/share/man/man1/"},
		{"man/man5/*.5", "/usr/share/man/man5/"},
		{"man/man8/*.8", "/usr/share/man/man8/"},
		{"completions/bash/*", "/usr/share/bash-completion/completions/"},
		{"completions/zsh/_*", zsh},
	} {
		files, _ := filepath.Glob(filepath.Join(repo, pat.src))
		if len(files) == 0 {
			t.Errorf("no %s in the repository", pat.src)
		}
		for _, f := range files {
			mustMode(t, root, pat.dst+filepath.Base(f), 0o644)
		}
	}
	for _, f := range []string{
		"/usr/lib/systemd/system/xced.service", "/usr/lib/systemd/system/xced-worker.service",
		"/usr/lib/systemd/system/xced-provisioner.service",
		"/etc/xce/xce.toml", "/etc/xce/xced.env", "/etc/xce/xced-worker.env", "/etc/xce/xced-provisioner.env",
	} {
		mustMode(t, root, f, 0o644)
	}
	mustMode(t, root, "/var/lib/xce", os.ModeDir|0o755)
	mustMode(t, root, "/var/lib/xce-worker", os.ModeDir|0o711)
	mustMode(t, root, "/var/lib/xce-provisioner", os.ModeDir|0o711)

	// xced runs from the scratch root, and accepts the shipped xce.toml.
	xced := filepath.Join(root, "usr/bin/xced")
	if out, err := exec.Command(xced, "--version").CombinedOutput(); err != nil || !strings.Contains(string(out), "XCE "+testRelease) {
		t.Errorf("xced --version from the package: %v\n%s", err, out)
	}
	if out, err := exec.Command(xced, "config", "check", filepath.Join(root, "etc/xce/xce.toml")).CombinedOutput(); err != nil {
		t.Errorf("xced config check /etc/xce/xce.toml: %v\n%s", err, out)
	}

	verifyUnits(t, root)
}

// verifyUnits runs systemd-analyze verify on the packaged units, with
// their /usr/bin and /etc/xce paths pointed into the scratch root (verify
// checks that ExecStart's binary exists) and man pointed at its pages
// (verify checks Documentation=). Any message fails the test: verify
// exits 0 on an unknown key or a value it cannot parse.
func verifyUnits(t *testing.T, root string) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Log("systemd-analyze is not installed: the units are not verified")
		return
	}
	dir := filepath.Join(filepath.Dir(root), "units")
	os.Mkdir(dir, 0o755)
	var units []string
	for _, u := range []string{"xced.service", "xced-worker.service", "xced-provisioner.service"} {
		b, err := os.ReadFile(filepath.Join(root, "usr/lib/systemd/system", u))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(b), "/usr/bin/", root+"/usr/bin/")
		s = strings.ReplaceAll(s, "/etc/xce/", root+"/etc/xce/")
		p := filepath.Join(dir, u)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		units = append(units, p)
	}
	verify := exec.Command("systemd-analyze", append([]string{"verify"}, units...)...)
	man := "--man=no"
	if _, err := exec.LookPath("man"); err == nil {
		man = "--man=yes"
		verify.Env = append(os.Environ(), "MANPATH="+filepath.Join(root, "usr/share/man"))
	}
	verify.Args = append(verify.Args[:2], append([]string{man}, verify.Args[2:]...)...)
	out, err := verify.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// nfpmModule is the nfpm the Makefile's package target runs.
func nfpmModule(t *testing.T, repo string) string {
	mk, err := os.ReadFile(filepath.Join(repo, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^NFPM\s*:=\s*(\S+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile names no NFPM")
	}
	return string(m[1])
}

// mustMode checks that path exists in root with the given type and mode.
func mustMode(t *testing.T, root, path string, mode os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(filepath.Join(root, path))
	if err != nil {
		t.Errorf("the package has no %s", path)
		return
	}
	if got := fi.Mode() & (os.ModeType | os.ModePerm); got != mode {
		t.Errorf("%s: mode %v, want %v", path, got, mode)
	}
}
