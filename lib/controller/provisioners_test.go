package controller

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"xce/lib/api/rpc"
	"xce/lib/clusterauth"
)

// Only a peer that proved the provisioner token may make a provisioner's
// calls: a worker's connection (the cluster token) and a user's are
// refused before anything is read.
func TestProvisionerCallsNeedRoleP(t *testing.T) {
	s := &ClusterService{}
	for name, ctx := range map[string]context.Context{
		"no peer": context.Background(),
		"worker":  peer.NewContext(context.Background(), &peer.Peer{AuthInfo: clusterauth.AuthInfo{Role: clusterauth.RoleWorker}}),
		"user":    peer.NewContext(context.Background(), &peer.Peer{AuthInfo: clusterauth.AuthInfo{Role: clusterauth.RoleUser}}),
		"replica": peer.NewContext(context.Background(), &peer.Peer{AuthInfo: clusterauth.AuthInfo{Role: clusterauth.RoleReplica}}),
	} {
		_, err := s.ProvisionerSync(ctx, &rpc.ProvisionerSyncRequest{Owner: "x", Want: []string{"p"}})
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("%s: ProvisionerSync: %v", name, err)
		}
		_, err = s.ProvisionerPut(ctx, &rpc.ProvisionerPutRequest{Owner: "x", Provider: "p"})
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("%s: ProvisionerPut: %v", name, err)
		}
		_, err = s.ProvisionerHost(ctx, &rpc.ProvisionerHostRequest{Owner: "x", Name: "h", Op: rpc.ProvisionerHostRequest_FORGET})
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("%s: ProvisionerHost: %v", name, err)
		}
	}
}
