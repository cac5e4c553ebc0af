package v1alpha1

// WhyAnswerKind answers the MCP server's why tool.
const WhyAnswerKind = "WhyAnswer"

// CauseView is one cause of a diagnosis as the why tool gives it: a Cause
// of plain strings (its evidence one line each), for the schema an MCP
// client infers, every string cut at the server's bound.
type CauseView struct {
	// Context is the kubeconfig context, when the server answers several.
	Context  string `json:"context,omitempty"`
	Reason   string `json:"reason"`
	Severity string `json:"severity"`
	// Object is the culprit as Kind/name, in Namespace; Missing when it
	// does not exist.
	Object    string `json:"object"`
	Namespace string `json:"namespace,omitempty"`
	Missing   bool   `json:"missing,omitempty"`
	Message   string `json:"message"`
	// Subject is the top-level owner the cause was found under, as
	// Kind/name, when every one of a namespace was diagnosed.
	Subject string `json:"subject,omitempty"`
	// Evidence is what was read, one line each (Evidence.String).
	Evidence []string `json:"evidence"`
}

// SubjectView is a subject diagnosed and its verdict.
type SubjectView struct {
	Context   string `json:"context,omitempty"`
	Object    string `json:"object"`
	Namespace string `json:"namespace,omitempty"`
	Status    string `json:"status"`
	Summary   string `json:"summary"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// WhyAnswer answers the why tool: the causes of every context's diagnosis,
// worst first (paged), and the verdict.
type WhyAnswer struct {
	TypeMeta `json:",inline"`
	Page     `json:",inline"`
	// Status is the worst of the diagnoses' statuses: Healthy, Unhealthy
	// (causes found) or Unknown (something wrong that no evidence names).
	Status string      `json:"status"`
	Causes []CauseView `json:"causes"`
	// Subjects are the subjects whose verdict is not Healthy; Healthy counts
	// the others.
	Subjects []SubjectView `json:"subjects"`
	Healthy  int           `json:"healthy"`
	// Checked counts what was looked at, by kind; Unseen names the types
	// that could not be read.
	Checked map[string]int `json:"checked"`
	Unseen  []string       `json:"unseen"`
}

// NewWhyAnswer returns an empty WhyAnswer.
func NewWhyAnswer() *WhyAnswer {
	return &WhyAnswer{TypeMeta: typeMetaOf(WhyAnswerKind), Page: newPage(), Causes: []CauseView{}, Subjects: []SubjectView{},
		Checked: map[string]int{}, Unseen: []string{}}
}
